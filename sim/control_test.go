package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/hdfs"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "1024B": 1024, "4K": 4096, "4k": 4096, "4KB": 4096, "4KiB": 4096, "2GiB": 2 << 30,
		"4T": 4 << 40, "500G": 500 << 30, "500 GB": 500 << 30, " 1.5TiB ": 3 << 39, "1.5t": 3 << 39,
		"3.9T": 4288095348326, // 3.9 × 2^40 = 4288095348326.4, to the nearest byte
		"0.5K": 512, ".5K": 512, "1.K": 1024, "7E": 7 << 60, "0.0001K": 0, "0.0005K": 1,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "x", "T", "1.5", "1.2.3T", "1e3", "1/2T", "4TB5", "4X", "4 KiBs", "4iB", "NaN", "+1", "8E", "99999999999P", "0x10"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		} else if !strings.Contains(err.Error(), "K, M, G, T") && !strings.Contains(err.Error(), "just below 8E") && !strings.Contains(err.Error(), "whole") {
			t.Errorf("ParseBytes(%q): %v does not say what is accepted", in, err)
		}
	}
	// What FormatBytes writes, ParseBytes reads back to within 0.05 of the unit.
	for _, n := range []int64{0, 1023, 1024, 4288095348326, 500 << 30, 1 << 62} {
		back, err := ParseBytes(FormatBytes(n))
		unit := int64(1)
		for unit <= n/1024 && unit < 1<<60 {
			unit *= 1024
		}
		if d := back - n; err != nil || d > unit/20+1 || d < -unit/20-1 {
			t.Errorf("FormatBytes(%d) = %q reads back as %d, %v", n, FormatBytes(n), back, err)
		}
	}
}

func TestControlPage(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hostname = "dn2.demo"
	s := mustOpen(t, cfg)
	base := "http://" + s.ControlAddr()

	// The demo's hint: sizes as people type them.
	code, out := post(t, base+"/sim/set?used=3.9T")
	var st State
	if err := json.Unmarshal([]byte(out), &st); code != 200 || err != nil || st.Used != 4288095348326 {
		t.Fatalf("used=3.9T: %d %s", code, out)
	}

	// A terminal gets text: the state and the actions, with this address.
	code, text, h := get(t, base+"/sim")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /sim: %d %v\n%s", code, h, text)
	}
	for _, want := range []string{
		"SIMULATED datanode dn2.demo", "running: /jmx and the data port answer", "3.9T (4288095348326 bytes), 97.5%",
		"curl -X POST " + base + "/sim/stop", "curl -X POST " + base + "/sim/start", "'" + base + "/sim/set?used=3.8T'",
		"K = KB = KiB = 1024 bytes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("GET /sim lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "/sim/ha") {
		t.Errorf("a DataNode offers an HA switch:\n%s", text)
	}
	if _, slash, _ := get(t, base+"/sim/"); slash != text {
		t.Errorf("GET /sim/ differs from GET /sim:\n%s", slash)
	}
	post(t, base+"/sim/stop")
	if _, text, _ := get(t, base+"/sim"); !strings.Contains(text, "STOPPED") {
		t.Errorf("after stop:\n%s", text)
	}

	// A browser gets HTML, and its form posts come back to the page.
	req, _ := http.NewRequest("GET", base+"/sim", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("browser GET: %d %v", resp.StatusCode, resp.Header)
	}
	form, _ := http.NewRequest("POST", base+"/sim/set", strings.NewReader(url.Values{"used": {"1.5TiB"}}.Encode()))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form.Header.Set("Accept", "text/html")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Do(form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sim" || s.State().Used != 3<<39 {
		t.Errorf("form post: %d %v, used %d", resp.StatusCode, resp.Header, s.State().Used)
	}
}

func TestControlRefusesNonsense(t *testing.T) {
	s := mustOpen(t, DefaultConfig())
	base := "http://" + s.ControlAddr()
	before := s.State()
	for q, want := range map[string]string{
		"used=3.9X":                             `used: "3.9X" is not a size`,
		"capacity=-1T":                          `capacity: "-1T" is not a size`,
		"used=1.5":                              "a number of bytes is whole",
		"used=5T":                               "would be more than the capacity, 4.0T",
		"blocks=1.5K":                           `blocks: "1.5K" is not a whole number`,
		"safemode=on":                           "a DataNode has no safe mode",
		"capacity=8T&used=5T&blocks=x":          "blocks", // all or nothing: capacity is not changed either
		"version=" + url.QueryEscape("3.3.6\n"): "not a version",
	} {
		code, out := post(t, base+"/sim/set?"+q)
		if code != http.StatusBadRequest || !strings.Contains(out, want) {
			t.Errorf("%s: %d %q, want 400 and %q", q, code, out, want)
		}
	}
	if after := s.State(); after.Capacity != before.Capacity || after.Used != before.Used || after.Blocks != before.Blocks || after.Version != before.Version {
		t.Errorf("a refused set changed the state: %+v → %+v", before, after)
	}
	if code, _ := post(t, base+"/sim/ha?state=active"); code != http.StatusBadRequest {
		t.Errorf("a DataNode took an HA state: %d", code)
	}
}

func TestControlPageNameNode(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Role, cfg.HAState, cfg.Hostname = hdfs.RoleNameNode, hdfs.HAActive, "nn1.demo"
	s := mustOpen(t, cfg)
	base := "http://" + s.ControlAddr()
	_, text, _ := get(t, base+"/sim")
	for _, want := range []string{"SIMULATED namenode nn1.demo", "HA state   active", "'" + base + "/sim/ha?state=standby'", "rpc port answer"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
}
