package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// lookupAnswer is the envelope of GET /v1/instances.
type lookupAnswer struct {
	Instances []json.RawMessage `json:"instances"`
	Unmatched []string          `json:"unmatched"`
}

func TestLookupInstancesByHostAndIP(t *testing.T) {
	ts := newTestServer(t)
	for i := range 5 {
		if err := ts.reg.Register(registrytest.DataNode(i), false); err != nil {
			t.Fatal(err)
		}
	}
	dn1, dn3 := registrytest.DataNode(1), registrytest.DataNode(3)
	q := url.Values{"host": {strings.ToUpper(dn1.HostName), dn3.IPAddr, "unknown.example", dn1.IPAddr}}
	r := ts.expect(http.StatusOK, "GET", "/v1/instances?"+q.Encode(), nil)
	var got lookupAnswer
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	var ids []string
	for _, raw := range got.Instances {
		// Each element is a Eureka instance, as /apps/{APP}/{ID} writes it
		// inside its {"instance":...} wrapper.
		in, err := eureka.DecodeServerInstance([]byte(`{"instance":`+string(raw)+`}`), eureka.JSON)
		if err != nil {
			t.Fatalf("instance %s: %v", raw, err)
		}
		if in.Metadata.Get("rack") == "" {
			t.Errorf("instance %s lost its metadata", in.ID)
		}
		ids = append(ids, in.ID)
	}
	if want := []string{dn1.ID, dn3.ID}; !slices.Equal(ids, want) {
		t.Errorf("instances = %v, want %v (each once, in the order first asked)", ids, want)
	}
	if want := []string{"unknown.example"}; !slices.Equal(got.Unmatched, want) {
		t.Errorf("unmatched = %v, want %v", got.Unmatched, want)
	}

	// An app filter that excludes them leaves every host unmatched.
	r = ts.expect(http.StatusOK, "GET", "/v1/instances?app=other&host="+dn1.HostName, nil)
	if err := json.Unmarshal(r.body, &got); err != nil || len(got.Instances) != 0 || !slices.Equal(got.Unmatched, []string{dn1.HostName}) {
		t.Errorf("with app=other: %s (%v), want no instances and the host unmatched", r.body, err)
	}
}

func TestLookupInstancesRejectsBadRequests(t *testing.T) {
	ts := newTestServer(t)
	many := url.Values{}
	for i := range 1001 {
		many.Add("host", "h"+strings.Repeat("x", i%3))
	}
	for _, c := range []struct{ query, want string }{
		{"", "no host"},
		{"host=", "host"},
		{"host=" + strings.Repeat("a", 254), "1 to 253"},
		{"hosts=a", "unknown query parameter"},
		{"host=a&app=X&app=Y", "at most one"},
		{many.Encode(), "at most 1000"},
	} {
		r := ts.expect(http.StatusBadRequest, "GET", "/v1/instances?"+c.query, nil)
		if !strings.Contains(string(r.body), c.want) {
			t.Errorf("?%.40s: %s, want a message saying %q", c.query, r.body, c.want)
		}
	}
}
