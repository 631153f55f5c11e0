package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
)

//go:embed assets
var assetFS embed.FS

// AssetPrefix is the path under which the page's assets are served; the
// route table mounts ServeAsset there.
const AssetPrefix = "/ui/"

// asset is one embedded file, ready to serve.
type asset struct {
	name  string
	body  []byte
	ctype string
	etag  string
	hash  string // first hex digits of the content's SHA-256
}

// contentSecurityPolicy lets the page load its own script, style sheet
// and icon and talk to its own server, and nothing else: instance data that
// slipped into the page as markup could still not run or load anything.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var (
	assets = map[string]*asset{} // by file name, index.html included
	index  *asset
)

func init() {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic("dashboard: " + err.Error())
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(assetFS, "assets/"+e.Name())
		if err != nil {
			panic("dashboard: " + err.Error())
		}
		assets[e.Name()] = newAsset(e.Name(), b)
	}
	page, ok := assets["index.html"]
	if !ok {
		panic("dashboard: assets/index.html is missing")
	}
	// The page names each asset with its content hash (ui/app.js?v=1a2b…),
	// so a browser never mixes a new page with an old script it cached.
	body := page.body
	for name, a := range assets {
		if name == "index.html" {
			continue
		}
		ref := `"ui/` + name + `"`
		body = bytes.ReplaceAll(body, []byte(ref), []byte(`"ui/`+name+`?v=`+a.hash+`"`))
	}
	index = newAsset("index.html", body)
	delete(assets, "index.html")
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	ctype := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) { // the host's MIME table may lack or misname these
	case ".js":
		ctype = "text/javascript; charset=utf-8"
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".html":
		ctype = "text/html; charset=utf-8"
	case ".svg":
		ctype = "image/svg+xml"
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	return &asset{name: name, body: body, ctype: ctype, etag: `"` + h[:20] + `"`, hash: h[:12]}
}

// ServeIndex answers GET / with the dashboard page.
func ServeIndex(w http.ResponseWriter, r *http.Request) error {
	serve(w, r, index, "no-cache")
	return nil
}

// ServeAsset answers GET /ui/NAME with the embedded asset NAME. An unknown
// name is an ENOTFOUND error, for the caller's error mapping. An asset
// asked for with its current hash (?v=…) may be cached for good.
func ServeAsset(w http.ResponseWriter, r *http.Request, name string) error {
	a, ok := assets[name]
	if !ok {
		return heureka.Errorf(heureka.ENOTFOUND, "the dashboard has no asset %q", name)
	}
	cache := "no-cache"
	if v := r.URL.Query().Get("v"); v != "" && v == a.hash {
		cache = "public, max-age=31536000, immutable"
	}
	serve(w, r, a, cache)
	return nil
}

// Assets lists the embedded asset names, index.html excluded.
func Assets() []string {
	names := make([]string, 0, len(assets))
	for n := range assets {
		names = append(names, n)
	}
	return names
}

func serve(w http.ResponseWriter, r *http.Request, a *asset, cache string) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", cache)
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if strings.HasPrefix(a.ctype, "text/html") {
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
	}
	// ServeContent answers If-None-Match (304), Range and HEAD.
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}
