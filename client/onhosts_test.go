package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// TestOnHosts: a heureka server is asked through its lookup; the same
// server behind a proxy that hides the lookup (as plain Eureka has none)
// is read whole and matched by the same rule, with the same answer.
func TestOnHosts(t *testing.T) {
	s := startServer(t)
	s.register(t, "HDFS-DATANODE.C", "dn1", heureka.StatusUp)
	s.register(t, "HDFS-DATANODE.C", "dn2", heureka.StatusUp)
	s.register(t, "OTHER", "o1", heureka.StatusUp)
	base, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: base.Scheme, Host: base.Host})
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(plain.Close)
	ctx := context.Background()
	for _, c := range []struct {
		url     string
		scanned bool
	}{{s.URL, false}, {plain.URL + base.Path, true}} {
		cl := newClient(t, c.url)
		for _, q := range []struct {
			hosts []string
			app   string
			want  []string
		}{
			{[]string{" DN2.example ", "nobody.example", "dn1.example"}, "", []string{"dn1", "dn2"}},
			{[]string{"10.0.0.1"}, "other", []string{"o1"}},
			{[]string{"nobody.example"}, "", nil},
		} {
			found, scanned, err := cl.OnHosts(ctx, q.hosts, q.app)
			var ids []string
			for _, in := range found {
				ids = append(ids, in.ID)
			}
			slices.Sort(ids)
			if err != nil || scanned != c.scanned || !slices.Equal(ids, q.want) {
				t.Errorf("%s: OnHosts(%q, %q) = %v, scanned %v, %v; want %v, scanned %v", c.url, q.hosts, q.app, ids, scanned, err, q.want, c.scanned)
			}
		}
	}
	if _, scanned, err := newClient(t, plain.URL+base.Path).OnHosts(ctx, []string{"h"}, "nosuchapp"); !scanned || !errors.Is(err, client.ErrNotRegistered) {
		t.Errorf("an unknown application on plain Eureka: scanned %v, %v; want ErrNotRegistered", scanned, err)
	}
}
