package cluster_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
)

// TestDebugClockMovesTheServersClock: with --debug-listen, a step of the
// server's clock through /debug/clock really moves what the registry
// reads: a registration made afterwards carries the stepped time.
func TestDebugClockMovesTheServersClock(t *testing.T) {
	t.Parallel()
	debug := proctest.FreeAddr(t, "127.0.0.1")
	p := startProc(t, "clocked", proctest.FreeAddr(t, "127.0.0.1"), "--debug-listen", debug)
	p.run.WaitFor(regexp.MustCompile(`msg="profiler serving"`), 10*time.Second)
	resp, err := client.Post("http://"+debug+"/debug/clock?jump=1h", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /debug/clock?jump=1h: %s", resp.Status)
	}
	p.register("c1", 30)
	code, body := p.do(http.MethodGet, "/eureka/apps/"+app+"/c1", nil)
	if code != http.StatusOK {
		t.Fatalf("GET c1: %d %s", code, body)
	}
	var got struct {
		Instance struct {
			LastDirty string `json:"lastDirtyTimestamp"`
			Lease     struct {
				Registered int64 `json:"registrationTimestamp"`
			} `json:"leaseInfo"`
		} `json:"instance"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	registered := time.UnixMilli(got.Instance.Lease.Registered)
	if ahead := time.Until(registered); ahead < 50*time.Minute || ahead > 70*time.Minute {
		t.Fatalf("registered at %v, %s from the real clock; want about an hour ahead", registered, ahead.Round(time.Second))
	}
}
