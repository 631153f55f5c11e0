package procstat

import (
	"os"
	"testing"
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
