package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

func get(t *testing.T, serve func(w http.ResponseWriter, r *http.Request) error, target string, hdr ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	if err := serve(w, r); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return w.Result()
}

func TestIndex(t *testing.T) {
	resp := get(t, ServeIndex, "/")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	// Every asset is referenced with its content hash.
	refs := regexp.MustCompile(`"ui/([a-z.]+)\?v=([0-9a-f]+)"`).FindAllStringSubmatch(string(body), -1)
	var named []string
	for _, m := range refs {
		a, ok := assets[m[1]]
		if !ok || a.hash != m[2] {
			t.Errorf("index.html refers to %s?v=%s, which is not an asset with that hash", m[1], m[2])
		}
		named = append(named, m[1])
	}
	for _, n := range []string{"app.js", "style.css", "favicon.svg"} {
		if !slices.Contains(named, n) {
			t.Errorf("index.html does not load %s with its hash", n)
		}
	}
	// A revalidation with the ETag is a 304.
	again := get(t, ServeIndex, "/", "If-None-Match", resp.Header.Get("ETag"))
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET /: %d, want 304", again.StatusCode)
	}
}

func TestAssets(t *testing.T) {
	for name, a := range assets {
		serve := func(w http.ResponseWriter, r *http.Request) error { return ServeAsset(w, r, name) }
		resp := get(t, serve, "/ui/"+name+"?v="+a.hash)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(body) != string(a.body) {
			t.Errorf("GET /ui/%s: %d, %d bytes", name, resp.StatusCode, len(body))
		}
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET /ui/%s?v=HASH: Cache-Control %q, want immutable", name, cc)
		}
		stale := get(t, serve, "/ui/"+name+"?v=old")
		if cc := stale.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET /ui/%s?v=old: Cache-Control %q, want no-cache", name, cc)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET /ui/%s: no nosniff", name)
		}
	}
	for name, ctype := range map[string]string{"app.js": "text/javascript", "style.css": "text/css", "favicon.svg": "image/svg+xml"} {
		if a, ok := assets[name]; !ok || !strings.HasPrefix(a.ctype, ctype) {
			t.Errorf("asset %s: missing or typed %v", name, a)
		}
	}
	for _, bad := range []string{"nope.js", "index.html", "../doc.go", ""} {
		err := ServeAsset(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/ui/x", nil), bad)
		if heureka.ErrorCode(err) != heureka.ENOTFOUND {
			t.Errorf("asset %q: %v, want ENOTFOUND", bad, err)
		}
	}
}

// TestScriptBuildsNoMarkup guards the escaping rule: the script never
// turns strings into markup.
func TestScriptBuildsNoMarkup(t *testing.T) {
	js := string(assets["app.js"].body)
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(js, banned) {
			t.Errorf("app.js uses %s", banned)
		}
	}
}
