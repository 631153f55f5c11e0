package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/heureka-project/heureka/internal/proctest"
)

// chromiumPath is Debian's Chromium; CI installs it (.ci/run).
const chromiumPath = "/usr/bin/chromium"

// requireChromium skips the test when Chromium is missing, except under
// CI=true, where a missing browser is a failure.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing and CI=true: the dashboard tests must run in CI (apt-get install -y chromium): %v", chromiumPath, err)
		}
		t.Skipf("skipping the headless-browser test: %s is not installed (apt-get install -y chromium); CI=true makes this a failure", chromiumPath)
	}
}

// page is one tab of a fresh headless Chromium, with the page's uncaught
// exceptions and console errors collected.
type page struct {
	ctx context.Context // chromedp's, for chromedp.Run

	mu     sync.Mutex
	errors []string
}

// openPage starts Chromium with a fresh profile and returns its first tab,
// window-sized w×h. Both end with the test.
func openPage(t *testing.T, w, h int) *page {
	t.Helper()
	requireChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("enable-precise-memory-info", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(w, h),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	p := &page{}
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			p.addError("uncaught exception: " + e.ExceptionDetails.Text + " " + describe(e.ExceptionDetails.Exception))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				p.addError("browser error: " + e.Entry.Text + " (" + e.Entry.URL + ")")
			}
		}
	}))
	p.ctx = ctx
	// The first call starts the browser; chromedp enables Runtime itself.
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	return p
}

func describe(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	return o.Description
}

func (p *page) addError(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errors = append(p.errors, s)
}

// Errors returns the exceptions and console errors seen so far.
func (p *page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// eval runs a JavaScript expression (awaiting a promise) and decodes its
// value into out (nil: ignore it).
func (p *page) eval(t *testing.T, expr string, out any) {
	t.Helper()
	if err := p.try(expr, out); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
}

func (p *page) try(expr string, out any) error {
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[json.RawMessage](expr, chromedp.EvalAwaitPromise))
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// waitFor polls a JavaScript condition until it is true, for at most d.
func (p *page) waitFor(t *testing.T, d time.Duration, cond, what string) {
	t.Helper()
	lastErr := proctest.Poll(d, func() error {
		var ok bool
		if err := p.try("Boolean("+cond+")", &ok); err != nil {
			return err
		}
		if !ok {
			return errors.New("false")
		}
		return nil
	})
	if lastErr == nil {
		return
	}
	var body string
	_ = p.try(`document.querySelector("main") ? document.querySelector("main").innerText : ""`, &body)
	p.screenshot(t, "failure-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".png")
	t.Fatalf("timed out after %v waiting for %s (condition %s; last error %v); page text:\n%s", d, what, cond, lastErr, tail(body, 3000))
}

// text returns the trimmed textContent of the first element matching sel.
func (p *page) text(t *testing.T, sel string) string {
	t.Helper()
	var s string
	p.eval(t, `(document.querySelector(`+jsString(sel)+`) || {}).textContent || ""`, &s)
	return strings.TrimSpace(s)
}

// heapMB is the page's used JS heap (Runtime.getHeapUsage), in MB.
func (p *page) heapMB(t *testing.T) float64 {
	t.Helper()
	if _, err := chromedp.Call(p.ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
		t.Fatalf("HeapProfiler.collectGarbage: %v", err)
	}
	u, err := chromedp.Call(p.ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		t.Fatalf("Runtime.getHeapUsage: %v", err)
	}
	return u.UsedSize / 1e6
}

// screenshot saves the whole page as a PNG in HEUREKA_SCREENSHOT_DIR, if
// set, from the top, once the page has painted two more frames.
func (p *page) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("HEUREKA_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	_ = p.try(`new Promise(r => { document.activeElement?.blur(); window.scrollTo(0, 0);
		requestAnimationFrame(() => requestAnimationFrame(() => r(true))); })`, nil)
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
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

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// metrics returns the page's Performance.getMetrics counters by name;
// the *Duration ones are seconds of main-thread work since the page
// started (TaskDuration covers all of it; ScriptDuration, LayoutDuration
// and RecalcStyleDuration are parts).
func (p *page) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	if _, err := chromedp.Call(p.ctx, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatalf("Performance.enable: %v", err)
	}
	r, err := chromedp.Call(p.ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		t.Fatalf("Performance.getMetrics: %v", err)
	}
	m := make(map[string]float64, len(r.Metrics))
	for _, x := range r.Metrics {
		m[x.Name] = x.Value
	}
	return m
}

// workMs is the main-thread work between two metrics readings, in ms:
// the whole task time and its script, style and layout parts.
func workMs(before, after map[string]float64) string {
	d := func(k string) float64 { return (after[k] - before[k]) * 1000 }
	return fmt.Sprintf("tasks %.0f ms (script %.0f, style %.0f, layout %.0f)", d("TaskDuration"), d("ScriptDuration"), d("RecalcStyleDuration"), d("LayoutDuration"))
}
