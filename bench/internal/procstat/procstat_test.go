package procstat

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadSelf(t *testing.T) {
	// Burn a little CPU so that the reading cannot be zero.
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	_ = x
	u, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.RSS <= 0 {
		t.Errorf("Read(self) = %+v, want CPU and RSS above zero", u)
	}
}

func TestReadMissing(t *testing.T) {
	if _, err := Read(1 << 30); err == nil {
		t.Error("Read of a PID that cannot exist returned no error")
	}
}

// TestWaitedSelf: threads that want more CPU than the machine has wait on
// a run queue, and Waited counts it while they live.
func TestWaitedSelf(t *testing.T) {
	before, err := Waited(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Four spinning threads a CPU, each on a thread of its own, all
	// running Go at once.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4 * runtime.NumCPU()))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 * runtime.NumCPU() {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for !stop.Load() {
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	after, err := Waited(os.Getpid())
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("Waited %v before and %v while %d threads spun on %d CPUs; want it to grow", before, after, 4*runtime.NumCPU(), runtime.NumCPU())
	}
	if _, err := Waited(1 << 30); err == nil {
		t.Error("Waited of a PID that cannot exist returned no error")
	}
}
