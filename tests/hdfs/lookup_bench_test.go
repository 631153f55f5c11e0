package hdfs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// TestLookupBenchmark measures issue 17's client-side targets: against a
// real server holding HEUREKA_BENCH_INSTANCES DataNodes (100k by default,
// ~1 KiB each, in one application), `heureka topology` with 100 hosts,
// `heureka pick -n 3` and `heureka instances --host` with 3 hosts, each a
// whole process, wall time and peak RSS.
// With HEUREKA_BENCH_BEFORE naming another heureka binary (say, one built
// from main before this change), that binary runs the same commands in
// alternation, and the table has both. It runs only with HEUREKA_BENCH=1:
//
//	go build -o /tmp/before/heureka ./cmd/heureka   # on the older commit
//	HEUREKA_BENCH=1 HEUREKA_BENCH_BEFORE=/tmp/before/heureka \
//	  go test ./tests/hdfs -run TestLookupBenchmark -v -timeout 30m
func TestLookupBenchmark(t *testing.T) {
	if os.Getenv("HEUREKA_BENCH") == "" {
		t.Skip("set HEUREKA_BENCH=1 to measure")
	}
	n := envInt("HEUREKA_BENCH_INSTANCES", 100000)
	trials := envInt("HEUREKA_BENCH_TRIALS", 10)
	reg := startServer(t)
	began := time.Now()
	registerFleet(t, reg.URL(), n, 32)
	t.Logf("registered %d DataNodes in %v", n, time.Since(began).Round(time.Millisecond))

	rng := rand.New(rand.NewPCG(17, 17))
	var hosts []string
	for range 100 {
		dn := registrytest.DataNode(rng.IntN(n))
		if rng.IntN(2) == 0 {
			hosts = append(hosts, dn.IPAddr)
		} else {
			hosts = append(hosts, dn.HostName)
		}
	}
	dir := t.TempDir()
	// Each binary has a cache file of its own: the formats differ.
	commands := []struct {
		name string
		args func(bin string) []string
	}{
		{"topology, 100 hosts", func(bin string) []string {
			return append([]string{"topology", "--timeout", "60s", "--registry", reg.URL(), "--cache", filepath.Join(dir, bin+".json")}, hosts...)
		}},
		{"pick -n 3", func(string) []string {
			return []string{"pick", "--cluster", "prod", "-n", "3", "--timeout", "60s", "--registry", reg.URL()}
		}},
		// An older binary has no --host: it lists the whole application,
		// which is what an operator looking for three nodes had to read.
		{"instances, 3 hosts", func(bin string) []string {
			args := []string{"instances", registrytest.DataNodeApp, "--timeout", "60s", "--registry", reg.URL()}
			if bin == "before" {
				return args
			}
			return append(args, "--host", strings.Join(hosts[:3], ","))
		}},
	}
	bins := []struct{ name, path string }{{"this", proctest.Bin(t)}}
	if b := os.Getenv("HEUREKA_BENCH_BEFORE"); b != "" {
		bins = append(bins, struct{ name, path string }{"before", b})
	}
	for _, c := range commands {
		res := map[string][]runCost{}
		for range trials {
			for _, b := range bins { // in alternation, so drift hits both
				res[b.name] = append(res[b.name], runMeasured(t, b.path, c.args(b.name)))
			}
		}
		for _, b := range bins {
			wall, rss := medians(res[b.name])
			t.Logf("%-20s %-7s median of %d: wall %7.1f ms, max RSS %6.1f MB", c.name, b.name, trials,
				float64(wall.Microseconds())/1000, float64(rss)/1024)
		}
	}
}

type runCost struct {
	wall  time.Duration
	rssKB int64
}

// runMeasured runs the binary once and returns its wall time and peak RSS
// (rusage Maxrss, KiB on Linux); a failed run fails the test.
func runMeasured(t *testing.T, bin string, args []string) runCost {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, args[0], err, out.String())
	}
	if args[0] == "topology" && strings.Count(out.String(), "/dc1/") != 100 {
		t.Fatalf("%s topology: want 100 racks of /dc1, got\n%s", bin, out.String())
	}
	if args[0] == "instances" && slices.Contains(args, "--host") && strings.Count(out.String(), "\n") != 4 {
		t.Fatalf("%s instances --host: want a header and 3 instances, got\n%s", bin, out.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		t.Fatal("no rusage on this platform")
	}
	return runCost{wall, ru.Maxrss}
}

func medians(rs []runCost) (time.Duration, int64) {
	walls := make([]time.Duration, len(rs))
	rss := make([]int64, len(rs))
	for i, r := range rs {
		walls[i], rss[i] = r.wall, r.rssKB
	}
	slices.Sort(walls)
	slices.Sort(rss)
	return walls[len(walls)/2], rss[len(rss)/2]
}

// registerFleet registers registrytest.DataNode(0..n-1) over HTTP with
// workers concurrent connections, with hour-long leases so that nothing
// expires while the benchmark runs without renewals.
func registerFleet(t *testing.T, base string, n, workers int) {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer hc.CloseIdleConnections()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				in := registrytest.DataNode(i)
				in.Lease.DurationSecs = 3600
				resp, err := hc.Post(base+"/apps/"+in.App, "application/json", bytes.NewReader(eureka.EncodeInstance(eureka.JSON, in)))
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != http.StatusNoContent {
						err = fmt.Errorf("register %s: %s", in.ID, resp.Status)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	deadline := time.After(10 * time.Minute)
feed:
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			t.Fatal(err)
		case <-deadline:
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
