package ui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// TestDashboardLive loads the dashboard once and watches it follow the
// registry: an instance registered after the page loaded appears, one that
// reports DOWN shows DOWN, one operators take out of service shows so, and
// one that deregisters disappears; the page never reloads, never runs
// instance data as markup and throws no errors.
func TestDashboardLive(t *testing.T) {
	requireChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ts := startServer(t)
	c := ts.newClient(t)
	dn1 := dataNode("prod", "dn1.example.com", "/dc1/rack-a", 41, 120_034)
	dn2 := dataNode("prod", "dn2.example.com", "/dc1/rack-a", 93, 220_710)
	dn3 := dataNode("prod", "dn3.example.com", "/dc1/rack-b", 12, 20_034)
	for _, in := range []*heureka.Instance{dn1, dn2, dn3} {
		if err := c.Register(ctx, in); err != nil {
			t.Fatal(err)
		}
	}

	b := startBrowser(t)
	p := b.page(t)
	for _, domain := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if err := p.call(ctx, domain, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.call(ctx, "Page.navigate", map[string]string{"url": ts.URL + "/"}, nil); err != nil {
		t.Fatal(err)
	}

	// The page loads, reads the registry and follows the event stream.
	waitFor(t, ctx, p, `document.title === "heureka" && window.heureka !== undefined`, "the page to load")
	waitFor(t, ctx, p, `document.querySelectorAll("tr[data-id]").length === 3`, "the three registered DataNodes")
	waitFor(t, ctx, p, `heureka.stream() === "live"`, "the event stream to connect")
	waitFor(t, ctx, p, `document.querySelector("#preservation .sp-state") !== null`, "the self-preservation state")
	if got := text(t, ctx, p, rowSel(dn2.ID)+` td.full`); !strings.Contains(got, "93%") {
		t.Errorf("dn2's fullness cell reads %q, want 93%%", got)
	}
	if got := text(t, ctx, p, rowSel(dn1.ID)+` td.rack`); got != "/dc1/rack-a" {
		t.Errorf("dn1's rack cell reads %q", got)
	}
	// A marker that a reload would wipe out.
	if err := p.eval(ctx, `window.__loadedOnce = "yes"`, nil); err != nil {
		t.Fatal(err)
	}

	// A newly registered instance appears.
	dn4 := dataNode("prod", "dn4.example.com", "/dc1/rack-c", 67, 99_001)
	if err := c.Register(ctx, dn4); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, p, `document.querySelector(`+jsString(rowSel(dn4.ID))+`) !== null`, "the new instance dn4 to appear")
	if got := text(t, ctx, p, rowSel(dn4.ID)+` td.status`); got != "UP" {
		t.Errorf("dn4's status cell reads %q, want UP", got)
	}
	if got := text(t, ctx, p, rowSel(dn4.ID)+` td.rack`); got != "/dc1/rack-c" {
		t.Errorf("dn4's rack cell reads %q, want /dc1/rack-c", got)
	}

	// A node going DOWN (its agent re-registers with DOWN) shows DOWN.
	down := dn1.Clone()
	down.Status = heureka.StatusDown
	if err := c.Register(ctx, down); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, p, `document.querySelector(`+jsString(rowSel(dn1.ID))+`)?.dataset.status === "DOWN"`, "dn1 to show DOWN")
	if got := text(t, ctx, p, rowSel(dn1.ID)+` td.status`); got != "DOWN" {
		t.Errorf("dn1's status cell reads %q, want DOWN", got)
	}
	waitFor(t, ctx, p, `[...document.querySelectorAll("#events li[data-type=status_changed]")].some(li => li.textContent.includes(`+jsString(dn1.ID)+`) && li.textContent.includes("UP → DOWN"))`,
		"the UP → DOWN event in the feed")

	// An operator's override shows too.
	if err := c.SetStatus(ctx, dn3.App, dn3.ID, heureka.StatusOutOfService); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, p, `document.querySelector(`+jsString(rowSel(dn3.ID))+`)?.dataset.status === "OUT_OF_SERVICE"`, "dn3 to show OUT_OF_SERVICE")

	// Instance data is text, never markup.
	evil := dataNode("prod", "dn5.example.com", "/dc1/rack-c", 5, 1)
	evil.ID = `evil-<img src=x onerror="window.__xss=1">`
	evil.Metadata["version"] = `<script>window.__xss=2</script>`
	evil.HostName = `<b onmouseover="window.__xss=3">host</b>`
	if err := c.Register(ctx, evil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, p, `document.querySelector(`+jsString(rowSel(evil.ID))+`) !== null`, "the instance with markup in its data")
	var injected bool
	if err := p.eval(ctx, `window.__xss !== undefined || document.querySelector("img[src=x], script:not([src]), b[onmouseover]") !== null`, &injected); err != nil {
		t.Fatal(err)
	}
	if injected {
		t.Error("instance data was interpreted as markup")
	}
	if got := text(t, ctx, p, rowSel(evil.ID)+` td.host`); got != evil.HostName {
		t.Errorf("host cell reads %q, want the literal %q", got, evil.HostName)
	}

	// A deregistered instance disappears.
	if err := c.Cancel(ctx, dn2.App, dn2.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, p, `document.querySelector(`+jsString(rowSel(dn2.ID))+`) === null`, "dn2 to disappear after its cancel")

	// All of it without a reload, and without a script error.
	var marker string
	if err := p.eval(ctx, `window.__loadedOnce || ""`, &marker); err != nil {
		t.Fatal(err)
	}
	if marker != "yes" {
		t.Error("the page reloaded: the marker set after the first load is gone")
	}
	for _, e := range p.eventsNamed("Runtime.exceptionThrown") {
		t.Errorf("uncaught exception in the page: %s", e)
	}
	for _, e := range p.eventsNamed("Log.entryAdded") {
		var entry struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		_ = json.Unmarshal(e, &entry)
		if entry.Entry.Level == "error" {
			t.Errorf("browser error: %s (%s)", entry.Entry.Text, entry.Entry.URL)
		}
	}
	screenshot(t, ctx, p, "dashboard.png")
}

// rowSel is the CSS selector of an instance's table row.
func rowSel(id string) string {
	return `tr[data-id="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id) + `"]`
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitFor polls a JavaScript condition in the page until it is true.
func waitFor(t *testing.T, ctx context.Context, p *cdp, cond, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		var ok bool
		lastErr = p.eval(ctx, "Boolean("+cond+")", &ok)
		if lastErr == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	var body string
	_ = p.eval(ctx, `document.body ? document.body.innerText : ""`, &body)
	screenshot(t, ctx, p, "failure-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".png")
	t.Fatalf("timed out waiting for %s (condition %s; last error %v); page text:\n%s", what, cond, lastErr, tail(body, 4000))
}

// text returns the textContent of the first element matching sel.
func text(t *testing.T, ctx context.Context, p *cdp, sel string) string {
	t.Helper()
	var s string
	if err := p.eval(ctx, `(document.querySelector(`+jsString(sel)+`) || {}).textContent || ""`, &s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(s)
}

// screenshot saves the page as a PNG in HEUREKA_SCREENSHOT_DIR, if set.
func screenshot(t *testing.T, ctx context.Context, p *cdp, name string) {
	t.Helper()
	dir := os.Getenv("HEUREKA_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := p.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot); err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", path)
}
