package accept

import (
	"net/http"
	"testing"
)

func TestGzip(t *testing.T) {
	for _, c := range []struct {
		headers []string
		want    bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"gzip"}, true},
		{[]string{"GZIP"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"gzip, deflate, br"}, true},
		{[]string{"deflate, br"}, false},
		{[]string{"identity"}, false},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.000"}, false},
		{[]string{"gzip;q=0.001"}, true},
		{[]string{"gzip;q=1.0"}, true},
		{[]string{"gzip ; Q=0.5"}, true},
		{[]string{"*"}, true},
		{[]string{"*;q=0"}, false},
		{[]string{"*, gzip;q=0"}, false},
		{[]string{"*;q=0, gzip"}, true},
		{[]string{"deflate", "gzip"}, true},
		{[]string{"notgzip, gzipped"}, false},
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		for _, h := range c.headers {
			r.Header.Add("Accept-Encoding", h)
		}
		if got := Gzip(r); got != c.want {
			t.Errorf("Accept-Encoding %q: Gzip = %v, want %v", c.headers, got, c.want)
		}
	}
}

func TestGzipAllocatesNothing(t *testing.T) {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept-Encoding", "deflate, gzip;q=0.8, *;q=0")
	if n := testing.AllocsPerRun(100, func() { Gzip(r) }); n != 0 {
		t.Errorf("Gzip allocates %v times per call", n)
	}
}
