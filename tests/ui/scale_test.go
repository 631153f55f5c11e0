package ui

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

// The scale tests print what they measured: how long the first paint of
// the rack map took, how long filter keystrokes took to be answered and
// painted, how long a DataNode's DOWN took to reach its cell, and the JS
// heap. They assert what the page shows (every cell, the DOWN cell, the
// filter's matches) and the heap bound, not the times: those are figures
// for the record, on a machine of unknown load.

// envInt reads a positive integer from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// cluster returns n DataNodes over racks racks of cluster, host i on rack
// i%racks: every 50th is over 90% full, the rest between 20% and 85%.
func cluster(name string, n, racks int) []*heureka.Instance {
	ins := make([]*heureka.Instance, 0, n+2)
	for i := range n {
		used := int64(20 + (i*37)%66)
		if i%50 == 7 {
			used = 93
		}
		host := fmt.Sprintf("dn%05d.%s.example.com", i, name)
		ins = append(ins, dataNode(name, host, fmt.Sprintf("/dc1/r%02d", i%racks), used, int64(100_000+i)))
	}
	return ins
}

// TestDashboardAtScale loads the dashboard over a registry of
// HEUREKA_UI_DATANODES DataNodes (20,000 unless set) on 40 racks, plus an
// HA pair of NameNodes, then takes a DataNode down, filters, and takes half
// of one rack down.
func TestDashboardAtScale(t *testing.T) {
	n := envInt(t, "HEUREKA_UI_DATANODES", 20_000)
	const racks = 40
	p := openPage(t, 1400, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	ts := startServer(t)

	ins := cluster("prod", n, racks)
	ins = append(ins, nameNode("prod", "nn1.prod.example.com", hdfs.HAActive), nameNode("prod", "nn2.prod.example.com", hdfs.HAStandby))
	start := time.Now()
	if err := ts.registerAll(ctx, ins); err != nil {
		t.Fatal(err)
	}
	t.Logf("registered %d instances over HTTP in %v", len(ins), time.Since(start).Round(time.Millisecond))

	if full, err := ts.size(ctx, "/eureka/apps"); err == nil {
		t.Logf("%d DataNodes: for comparison, GET /eureka/apps (JSON) is %d KB", n, full/1000)
	}
	load := loadPage(t, p, ts, n)
	t.Logf("%d DataNodes: first paint of the rack map %.0f ms after navigation start (summary %d KB on the wire, %d KB decoded)", n, load.rackMap, load.summaryWire/1000, load.summaryBody/1000)
	heap := p.heapMB(t)
	t.Logf("%d DataNodes: JS heap %.1f MB after load (Runtime.getHeapUsage, after a GC)", n, heap)
	if heap > 50 {
		t.Errorf("JS heap %.1f MB, want at most 50 MB", heap)
	}
	var nn []string
	p.eval(t, `[...document.querySelectorAll("#maps .nn")].map(e => e.textContent)`, &nn)
	if len(nn) != 2 || !strings.Contains(nn[0], "active") || !strings.Contains(nn[1], "standby") {
		t.Errorf("the NameNode pair reads %q, want nn1 active and nn2 standby", nn)
	}

	// One DataNode goes DOWN: its cell turns.
	victim := ins[n/2].Clone()
	victim.Status = heureka.StatusDown
	sent := time.Now()
	if err := ts.register(ctx, victim); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 10*time.Second, `heureka.cell(`+jsString(victim.App)+`, `+jsString(victim.ID)+`)?.pixel === heureka.colour("DOWN")`, "the DOWN DataNode's cell")
	t.Logf("%d DataNodes: one DOWN shown in its cell %v after the registry answered the change (polled every 20 ms)", n, time.Since(sent).Round(time.Millisecond))

	// The filter, typed key by key.
	m0 := p.metrics(t)
	filterMs := typeAndTime(t, p, "r17 dn0")
	t.Logf("%d DataNodes: the 7 keystrokes cost the page's main thread %s", n, workMs(m0, p.metrics(t)))
	var note string
	p.waitFor(t, 5*time.Second, `document.querySelector("section.app[data-app='HDFS-DATANODE.PROD'] .list-note").textContent.includes("match")`, "the filter's count")
	note = p.text(t, `section.app[data-app='HDFS-DATANODE.PROD'] .list-note`)
	t.Logf("%d DataNodes: filter keystrokes answered and painted in %v ms (%s)", n, filterMs, note)
	var shown int
	p.eval(t, `document.querySelectorAll("section.app[data-app='HDFS-DATANODE.PROD'] tr[data-id]").length`, &shown)
	if shown == 0 || shown > 40 {
		t.Errorf("the filtered table has %d rows in the DOM, want a window of at most 40", shown)
	}
	var bad []string
	p.eval(t, `[...document.querySelectorAll("section.app[data-app='HDFS-DATANODE.PROD'] tr[data-id] td.rack")].map(e => e.textContent).filter(r => r !== "/dc1/r17")`, &bad)
	if len(bad) > 0 {
		t.Errorf("the filter r17 shows rows on racks %q", bad)
	}
	typeFilter(t, p, "")

	// A restart: every DataNode re-registers STARTING, then UP.
	storm(t, ctx, p, ts, ins[:n], "prod")

	// Half of rack /dc1/r17 goes DOWN: the rack is seen red at once.
	var half []*heureka.Instance
	for i, in := range ins[:n] {
		if i%racks == 17 && i/racks < n/racks/2 {
			d := in.Clone()
			d.Status = heureka.StatusDown
			half = append(half, d)
		}
	}
	if err := ts.registerAll(ctx, half); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `document.querySelector(".rack[data-rack='/dc1/r17']").classList.contains("rack-half")`, "rack /dc1/r17 to show half red")
	p.waitFor(t, 30*time.Second, `heureka.pending() === 0`, "the page to apply every change")
	downPixel := colour(t, p, "DOWN")
	for _, d := range half {
		if c := cellOf(t, p, d); c.Pixel != downPixel {
			t.Fatalf("%s's cell is %s, want DOWN's %s", d.ID, c.Pixel, downPixel)
		}
	}
	for _, e := range p.Errors() {
		t.Error(e)
	}
	p.screenshot(t, "dashboard-"+strconv.Itoa(n)+".png")
}

type pageLoad struct {
	rackMap                  float64 // ms from navigation start to the frame after the rack map was built
	summaryWire, summaryBody int
}

// loadPage navigates to the dashboard and waits for the rack map with
// cells cells.
func loadPage(t *testing.T, p *page, ts *server, cells int) pageLoad {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 60*time.Second, `window.heureka && heureka.timing().rackMap > 0`, "the rack map's first paint")
	p.waitFor(t, 10*time.Second, `[...document.querySelectorAll("#maps .rack")].reduce((n, r) => n + Number(r.querySelector(".rack-counts").textContent.match(/[0-9,]+/g).reduce((s, x) => s + Number(x.replace(/,/g, "")), 0)), 0) === `+strconv.Itoa(cells), "a cell per DataNode")
	p.waitFor(t, 10*time.Second, `heureka.stream() === "live"`, "the event stream")
	var l struct {
		RackMap float64 `json:"rackMap"`
		Wire    int     `json:"wire"`
		Body    int     `json:"body"`
	}
	p.eval(t, `(() => { const s = performance.getEntriesByType("resource").find(e => e.name.includes("v1/dashboard/summary")) || {};
		return { rackMap: heureka.timing().rackMap, wire: s.transferSize || 0, body: s.decodedBodySize || 0 }; })()`, &l)
	return pageLoad{rackMap: l.RackMap, summaryWire: l.Wire, summaryBody: l.Body}
}

// typeAndTime types s into the filter key by key and returns, per key, the
// page's measure: from the input event's timestamp to the first animation
// frame after the one that redrew the tables (so, painted).
func typeAndTime(t *testing.T, p *page, s string) []int {
	t.Helper()
	var n int
	p.eval(t, `heureka.timing().filterMs.length`, &n)
	typeFilter(t, p, "") // one input event, answered before the count starts
	p.waitFor(t, 10*time.Second, `heureka.timing().filterMs.length > `+strconv.Itoa(n), "the cleared filter to be answered")
	var before int
	p.eval(t, `heureka.timing().filterMs.length`, &before)
	if err := chromedp.Do(p.ctx, chromedp.SendKeys(chromedp.ID("filter"), s)); err != nil {
		t.Fatalf("typing %q into the filter: %v", s, err)
	}
	p.waitFor(t, 10*time.Second, `heureka.timing().filterMs.length >= `+strconv.Itoa(before+len(s)), "every keystroke to be answered")
	var ms []float64
	p.eval(t, `heureka.timing().filterMs.slice(`+strconv.Itoa(before)+`)`, &ms)
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = int(m + 0.5)
	}
	return out
}

// storm re-registers every instance of ins twice, as a restart does
// (STARTING, then UP), while it measures how long the page takes to answer
// a trivial evaluation; at the end every cell must be UP again.
func storm(t *testing.T, ctx context.Context, p *page, ts *server, ins []*heureka.Instance, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for _, st := range []heureka.Status{heureka.StatusStarting, heureka.StatusUp} {
			wave := make([]*heureka.Instance, len(ins))
			for i, in := range ins {
				wave[i] = in.Clone()
				wave[i].Status = st
			}
			if err := ts.registerAll(ctx, wave); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var worst, total time.Duration
	probes, catchingUp := 0, false
	m0 := p.metrics(t)
	start := time.Now()
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		case <-time.After(100 * time.Millisecond): // the probe interval
		}
		t0 := time.Now()
		var busy bool
		p.eval(t, `heureka.catchingUp()`, &busy)
		d := time.Since(t0)
		catchingUp = catchingUp || busy
		worst, total, probes = max(worst, d), total+d, probes+1
	}
	t.Logf("storm: %d re-registrations of %s in %v; the page answered %d probes in %v on average, %v at worst; it said it was catching up: %v",
		2*len(ins), what, time.Since(start).Round(time.Millisecond), probes, (total / time.Duration(probes)).Round(time.Millisecond), worst.Round(time.Millisecond), catchingUp)
	p.waitFor(t, 60*time.Second, `heureka.pending() === 0 && !heureka.catchingUp()`, "the page to catch up after the storm")
	t.Logf("storm: caught up %v after it began; main thread %s", time.Since(start).Round(time.Millisecond), workMs(m0, p.metrics(t)))
	var up string
	p.eval(t, `heureka.colour("UP")`, &up)
	for i := 0; i < len(ins); i += 97 {
		if c := cellOf(t, p, ins[i]); c.Pixel != up {
			t.Fatalf("after the storm %s's cell is %s (%s), want UP's %s", ins[i].ID, c.Pixel, c.Class, up)
		}
	}
}

// TestDashboardHundredThousand loads the dashboard over 100,000 instances
// in 50 applications: five HDFS clusters of 10,000 DataNodes and 45 other
// services. It takes a minute or two of registering, so it runs only when
// HEUREKA_UI_100K=1.
func TestDashboardHundredThousand(t *testing.T) {
	if os.Getenv("HEUREKA_UI_100K") != "1" {
		t.Skip("set HEUREKA_UI_100K=1 to load 100,000 instances")
	}
	p := openPage(t, 1400, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ts := startServer(t)
	var ins, dns []*heureka.Instance
	for c := range 5 {
		cl := cluster(fmt.Sprintf("c%d", c), 10_000, 40)
		dns = append(dns, cl...)
		ins = append(ins, cl...)
	}
	for a := range 45 {
		for i := range 50_000 / 45 {
			in := instance("", "", fmt.Sprintf("svc%02d-%04d.example.com", a, i), "", 8080, heureka.MetadataOf(map[string]string{"zone": fmt.Sprintf("z%d", i%3)}))
			in.App = fmt.Sprintf("SERVICE-%02d", a)
			in.VIPAddress = strings.ToLower(in.App)
			in.ID = fmt.Sprintf("svc%02d-%04d", a, i)
			if i%97 == 0 {
				in.Status = heureka.StatusDown
			}
			ins = append(ins, in)
		}
	}
	for len(ins) < 100_000 {
		in := instance("", "", fmt.Sprintf("extra-%d.example.com", len(ins)), "", 8080, heureka.Metadata{})
		in.App, in.ID = "SERVICE-00", fmt.Sprintf("extra-%d", len(ins))
		ins = append(ins, in)
	}
	start := time.Now()
	if err := ts.registerAll(ctx, ins); err != nil {
		t.Fatal(err)
	}
	t.Logf("registered %d instances over HTTP in %v", len(ins), time.Since(start).Round(time.Millisecond))

	load := loadPage(t, p, ts, len(dns))
	var apps int
	p.eval(t, `document.querySelectorAll("section.app").length`, &apps)
	if apps != 50 {
		t.Errorf("%d application cards, want 50", apps)
	}
	t.Logf("100k instances: first paint of the rack maps %.0f ms after navigation start (summary %d KB on the wire, %d KB decoded)", load.rackMap, load.summaryWire/1000, load.summaryBody/1000)
	t.Logf("100k instances: JS heap %.1f MB after load", p.heapMB(t))
	m0 := p.metrics(t)
	filterMs := typeAndTime(t, p, "svc07-01")
	t.Logf("100k instances: filter keystrokes answered and painted in %v ms; main thread %s", filterMs, workMs(m0, p.metrics(t)))
	typeFilter(t, p, "")
	storm(t, ctx, p, ts, dns[:20_000], "20,000 DataNodes")
	for _, e := range p.Errors() {
		t.Error(e)
	}
	p.screenshot(t, "dashboard-100k.png")
}
