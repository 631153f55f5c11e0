package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heureka-project/heureka"
)

// TestDashboardLive loads the dashboard once and watches it follow the
// registry: an instance registered after the page loaded appears, one that
// reports DOWN shows DOWN in its row and its rack-map cell, one operators
// take out of service shows so, and one that deregisters disappears; the
// page never reloads, never runs instance data as markup and throws no
// errors.
func TestDashboardLive(t *testing.T) {
	p := openPage(t, 1400, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ts := startServer(t)
	dn1 := dataNode("prod", "dn1.example.com", "/dc1/rack-a", 41, 120_034)
	dn2 := dataNode("prod", "dn2.example.com", "/dc1/rack-a", 93, 220_710)
	dn3 := dataNode("prod", "dn3.example.com", "/dc1/rack-b", 12, 20_034)
	if err := ts.registerAll(ctx, []*heureka.Instance{dn1, dn2, dn3}); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(p.ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	// The page loads, reads the summary and follows the event stream.
	p.waitFor(t, 15*time.Second, `document.title === "heureka" && window.heureka !== undefined`, "the page to load")
	p.waitFor(t, 15*time.Second, `document.querySelectorAll("tr[data-id]").length === 3`, "the three registered DataNodes")
	p.waitFor(t, 15*time.Second, `heureka.stream() === "live"`, "the event stream to connect")
	p.waitFor(t, 15*time.Second, `document.querySelector("#preservation .sp-state") !== null`, "the self-preservation state")
	if got := p.text(t, rowSel(dn2.ID)+` td.full`); !strings.Contains(got, "93%") {
		t.Errorf("dn2's fullness cell reads %q, want 93%%", got)
	}
	if got := p.text(t, rowSel(dn1.ID)+` td.rack`); got != "/dc1/rack-a" {
		t.Errorf("dn1's rack cell reads %q", got)
	}
	// The rack map: one cluster, two racks, a cell per DataNode.
	if got := p.text(t, `#maps .cluster h3`); got != "HDFS cluster prod" {
		t.Errorf("the rack map's cluster reads %q", got)
	}
	var racks []string
	p.eval(t, `[...document.querySelectorAll("#maps .rack .rack-name")].map(e => e.textContent)`, &racks)
	if strings.Join(racks, " ") != "/dc1/rack-a /dc1/rack-b" {
		t.Errorf("the rack map's racks are %q", racks)
	}
	if got, up := cellOf(t, p, dn1), colour(t, p, "UP"); got.Pixel != up || !strings.Contains(got.Class, "st-up") {
		t.Errorf("dn1's cell is %+v, want st-up painted %s", got, up)
	}
	// A marker that a reload would wipe out.
	p.eval(t, `window.__loadedOnce = "yes"`, nil)

	// A newly registered instance appears, in the table and the map.
	dn4 := dataNode("prod", "dn4.example.com", "/dc1/rack-c", 67, 99_001)
	if err := ts.register(ctx, dn4); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector(`+jsString(rowSel(dn4.ID))+`) !== null`, "the new instance dn4 to appear")
	if got := p.text(t, rowSel(dn4.ID)+` td.status`); got != "UP" {
		t.Errorf("dn4's status cell reads %q, want UP", got)
	}
	if got := p.text(t, rowSel(dn4.ID)+` td.rack`); got != "/dc1/rack-c" {
		t.Errorf("dn4's rack cell reads %q, want /dc1/rack-c", got)
	}
	p.waitFor(t, 5*time.Second, `document.querySelectorAll("#maps .rack").length === 3`, "a third rack in the map")

	// A node going DOWN (its agent re-registers with DOWN) shows DOWN.
	down := dn1.Clone()
	down.Status = heureka.StatusDown
	if err := ts.register(ctx, down); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector(`+jsString(rowSel(dn1.ID))+`)?.dataset.status === "DOWN"`, "dn1 to show DOWN")
	if got := p.text(t, rowSel(dn1.ID)+` td.status`); got != "DOWN" {
		t.Errorf("dn1's status cell reads %q, want DOWN", got)
	}
	if got, down := cellOf(t, p, dn1), colour(t, p, "DOWN"); got.Pixel != down || !strings.Contains(got.Class, "st-down") {
		t.Errorf("dn1's rack-map cell is %+v, want st-down painted %s", got, down)
	}
	p.waitFor(t, 15*time.Second, `[...document.querySelectorAll("#events li[data-type=status_changed]")].some(li => li.textContent.includes(`+jsString(dn1.ID)+`) && li.textContent.includes("UP → DOWN"))`,
		"the UP → DOWN event in the feed")

	// An operator's override shows too.
	if err := ts.setStatus(ctx, dn3.App, dn3.ID, heureka.StatusOutOfService); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector(`+jsString(rowSel(dn3.ID))+`)?.dataset.status === "OUT_OF_SERVICE"`, "dn3 to show OUT_OF_SERVICE")

	// Instance data is text, never markup.
	evil := dataNode("prod", "dn5.example.com", "/dc1/rack-c", 5, 1)
	evil.ID = `evil-<img src=x onerror="window.__xss=1">`
	evil.Metadata = evil.Metadata.With("version", `<script>window.__xss=2</script>`)
	evil.Metadata = evil.Metadata.With("rack", `/dc1/<i onclick="window.__xss=4">r</i>`)
	evil.HostName = `<b onmouseover="window.__xss=3">host</b>`
	if err := ts.register(ctx, evil); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector(`+jsString(rowSel(evil.ID))+`) !== null`, "the instance with markup in its data")
	// Its details, read on demand, are text too.
	p.eval(t, `document.querySelector(`+jsString(rowSel(evil.ID))+`).click()`, nil)
	p.waitFor(t, 15*time.Second, `document.querySelector("#details code") !== null`, "the details of the hostile instance")
	var injected bool
	p.eval(t, `window.__xss !== undefined || document.querySelector("img[src=x], script:not([src]), b[onmouseover], i[onclick]") !== null`, &injected)
	if injected {
		t.Error("instance data was interpreted as markup")
	}
	if got := p.text(t, rowSel(evil.ID)+` td.host`); got != evil.HostName {
		t.Errorf("host cell reads %q, want the literal %q", got, evil.HostName)
	}
	if got := p.text(t, "#details h3"); got != evil.ID {
		t.Errorf("the details panel is titled %q, want the literal %q", got, evil.ID)
	}

	// The filter narrows the tables.
	typeFilter(t, p, "rack-b")
	p.waitFor(t, 5*time.Second, `document.querySelectorAll("tr[data-id]").length === 1`, "the filter to leave dn3 alone")
	if got := p.text(t, `tr[data-id] td.host`); got != dn3.HostName {
		t.Errorf("filtered to %q, want dn3", got)
	}
	typeFilter(t, p, "")
	p.waitFor(t, 5*time.Second, `document.querySelectorAll("tr[data-id]").length === 5`, "the cleared filter to show all five")

	// A deregistered instance disappears from the table and the map.
	if err := ts.cancel(ctx, dn2.App, dn2.ID); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector(`+jsString(rowSel(dn2.ID))+`) === null`, "dn2 to disappear after its cancel")
	if got := cellOf(t, p, dn2); got != (cell{}) {
		t.Errorf("dn2's cell is still in the map: %+v", got)
	}

	// All of it without a reload, and without a script error.
	var marker string
	p.eval(t, `window.__loadedOnce || ""`, &marker)
	if marker != "yes" {
		t.Error("the page reloaded: the marker set after the first load is gone")
	}
	for _, e := range p.Errors() {
		t.Error(e)
	}
	p.screenshot(t, "dashboard.png")
}

// rowSel is the CSS selector of an instance's table row.
func rowSel(id string) string {
	return `tr[data-id="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id) + `"]`
}

// cell is what the rack map shows for a DataNode: its status and fullness
// band, and the colour of its square's centre pixel on the canvas.
type cell struct {
	Class string `json:"class"`
	Pixel string `json:"pixel"`
}

// cellOf reads in's cell; the zero cell when the map has none.
func cellOf(t *testing.T, p *page, in *heureka.Instance) cell {
	t.Helper()
	var c *cell
	p.eval(t, `heureka.cell(`+jsString(in.App)+`, `+jsString(in.ID)+`)`, &c)
	if c == nil {
		return cell{}
	}
	return *c
}

// colour is the pixel colour the map paints for a status or fullness band.
func colour(t *testing.T, p *page, name string) string {
	t.Helper()
	var c string
	p.eval(t, `heureka.colour(`+jsString(name)+`)`, &c)
	return c
}

// typeFilter replaces the filter's text by typing it, key by key.
func typeFilter(t *testing.T, p *page, s string) {
	t.Helper()
	p.eval(t, `(() => { const f = document.querySelector("#filter"); f.focus(); f.value = ""; f.dispatchEvent(new Event("input")); return true })()`, nil)
	var acts []chromedp.Action[chromedp.Void]
	if s != "" {
		acts = append(acts, chromedp.SendKeys(chromedp.ID("filter"), s))
	}
	if err := chromedp.Do(p.ctx, acts...); err != nil {
		t.Fatalf("typing %q into the filter: %v", s, err)
	}
}

// TestDashboardDNSLine: with --dns-listen, the header names the DNS zone,
// its address and the queries answered, and the count follows queries.
func TestDashboardDNSLine(t *testing.T) {
	p := openPage(t, 1400, 700)
	ts := startServer(t, "--dns-listen", "127.0.0.1:0")
	if err := chromedp.Do(p.ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector("#node .dns") !== null`, "the DNS line")
	got := p.text(t, "#node .dns")
	if !strings.HasPrefix(got, "DNS heureka. on 127.0.0.1:") || !strings.HasSuffix(got, " · 0 queries") {
		t.Errorf("the DNS line reads %q; want DNS heureka. on 127.0.0.1:PORT · 0 queries", got)
	}
	p.screenshot(t, "dashboard-dns.png")
}
