package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
)

// TestBinaryCollectsLessInAStorm runs the real server with a low storm
// rate and registers fast enough to be a storm: its log says the
// collector's target went from 50 to 100 while the storm lasted and back
// to 50 after it. With GOGC given, the command leaves the collector alone.
func TestBinaryCollectsLessInAStorm(t *testing.T) {
	raised := regexp.MustCompile(`the collector lets the heap grow further.*gc_percent=100 was=50`)
	back := regexp.MustCompile(`the collector's target is back.*gc_percent=50`)
	stormOver := regexp.MustCompile(`registration storm over`)
	for _, gogc := range []string{"", "50"} {
		t.Run("GOGC="+gogc, func(t *testing.T) {
			cmd := exec.Command(proctest.Bin(t), "server", "--listen", "127.0.0.1:0", "--log-level", "info", "--storm-rate", "50")
			cmd.Env = append(os.Environ(), "GOGC="+gogc)
			p := proctest.StartCmd(t, "heureka server", cmd)
			base := "http://" + p.WaitAddr(60*time.Second)
			// 2.5 s of registrations, at most 2,000, paced to a few hundred
			// a second: the registry judges the rate between ticks, every
			// 0.5 s from the second tick on, so the burst must outlast the
			// first ones.
			start := time.Now()
			n := 0
			for ; n < 2000 && time.Since(start) < 2500*time.Millisecond; n++ {
				time.Sleep(2 * time.Millisecond)
				i := n
				ip := fmt.Sprintf("10.1.%d.%d", i/250, i%250)
				if code, body, _ := request(t, "POST", base+"/eureka/apps/ORDERS", strings.ReplaceAll(registerBody, "10.0.0.5", ip)); code != 204 {
					t.Fatalf("register %s: %d %s", ip, code, body)
				}
			}
			t.Logf("%d registrations in %s", n, time.Since(start).Round(time.Millisecond))
			if gogc != "" {
				p.WaitFor(stormOver, 20*time.Second)
				if raised.MatchString(p.Output()) || back.MatchString(p.Output()) {
					t.Fatalf("with GOGC=%s the server changed the collector's target:\n%s", gogc, p.Output())
				}
				return
			}
			p.WaitFor(raised, 10*time.Second)
			p.WaitFor(back, 20*time.Second)
		})
	}
}
