package httpapi

import (
	"bufio"
	"fmt"
	"net"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
)

// BenchmarkWatchFanout measures one registry change reaching W open watch
// streams: from the write returning until each watcher has read the event.
// It reports p50, p99 and max over every watcher and change, and the server
// heap per watcher:
//
//	go test -run '^$' -bench WatchFanout -benchtime 20x ./internal/httpapi
func BenchmarkWatchFanout(b *testing.B) {
	for _, w := range []int{1000, 5000} {
		b.Run(fmt.Sprint(w), func(b *testing.B) { benchFanout(b, w) })
	}
}

func benchFanout(b *testing.B, watchers int) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	registerRange(b, reg, 0, 1000)
	api := mustNew(b, DefaultConfig(), reg, nil)
	ts := httptest.NewServer(api.Handler())
	defer func() { api.CloseStreams(); ts.Close() }()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	// Each watcher is a raw connection whose reader notes when it sees the
	// change with the awaited id.
	type arrival struct {
		seq uint64
		at  time.Time
	}
	arrivals := make(chan arrival, watchers*4)
	var ready sync.WaitGroup
	conns := make([]net.Conn, watchers)
	for i := range watchers {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			b.Fatalf("watcher %d: %v", i, err)
		}
		conns[i] = c
		fmt.Fprintf(c, "GET /v1/watch HTTP/1.1\r\nHost: x\r\n\r\n")
		ready.Add(1)
		go func() {
			r := bufio.NewReaderSize(c, 16<<10)
			hello := false
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if !hello && strings.HasPrefix(line, "event: hello") {
					hello = true
					ready.Done()
				}
				if id, ok := strings.CutPrefix(line, "id: "); ok {
					var seq uint64
					fmt.Sscan(strings.TrimSpace(id), &seq)
					arrivals <- arrival{seq: seq, at: time.Now()}
				}
			}
		}()
	}
	ready.Wait()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// The watchers' side (a goroutine and a 16 KiB reader each) is in this
	// process too: the figure is the cost of both ends of a connection.
	perWatcher := float64(after.HeapInuse-before.HeapInuse) / float64(watchers)

	var lat []time.Duration
	id := benchInstance(0).ID
	b.ResetTimer()
	for i := range b.N {
		st := heureka.StatusOutOfService
		if i%2 == 1 {
			st = heureka.StatusUp
		}
		start := time.Now()
		if err := reg.SetStatus("HDFS-DATANODE.PROD", id, st, 0, false); err != nil {
			b.Fatal(err)
		}
		seq := reg.Snapshot().Version
		for got := 0; got < watchers; {
			select {
			case a := <-arrivals:
				if a.seq == seq {
					lat = append(lat, a.at.Sub(start))
					got++
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("change %d: %d of %d watchers heard it within 30 s", i, got, watchers)
			}
		}
	}
	b.StopTimer()
	for _, c := range conns {
		c.Close()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(perWatcher, "heap-B/watcher")
}
