package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/testclock"
)

// TestListingsAndTheSummaryReadAcceptEncodingAlike: the Eureka listing and
// the dashboard's summary gzip by one rule, so "gzip;q=0" (gzip refused)
// gets a plain answer from both, and "gzip" a gzipped one.
func TestListingsAndTheSummaryReadAcceptEncodingAlike(t *testing.T) {
	_, reg, hs := encoderServer(t, testclock.New(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)))
	registerRange(t, reg, 0, 3)
	for _, path := range []string{"/eureka/apps/", "/v1/dashboard/summary"} {
		for _, c := range []struct {
			accept, want string
		}{{"gzip", "gzip"}, {"gzip;q=0", ""}, {"identity, *;q=0.5", "gzip"}, {"deflate", ""}} {
			req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Accept-Encoding", c.accept)
			resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != c.want {
				t.Errorf("GET %s with Accept-Encoding %q: %d, Content-Encoding %q; want 200, %q",
					path, c.accept, resp.StatusCode, resp.Header.Get("Content-Encoding"), c.want)
			}
		}
	}
}
