package sim

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka/hdfs"
)

// Handler returns the control API, which Open serves on Config.ControlAddr:
//
//	GET  /sim                                the node's state and the actions below,
//	                                         as text for a terminal, HTML for a browser
//	GET  /sim/state                          the State, as JSON
//	POST /sim/stop                           the daemon stops answering (Stop)
//	POST /sim/start                          it comes back (Start)
//	POST /sim/ha?state=active|standby|...    a NameNode changes HA state
//	POST /sim/set?capacity=S&used=S&blocks=N&version=V&safemode=on|off
//	                                         change figures (any subset); S is a
//	                                         size (ParseBytes), N a whole number
//
// Every POST answers with the new State as JSON, except one from a browser
// form (Accept: text/html), which is sent back to GET /sim. Bad parameters
// are 400, with a message that says what was wrong and what is accepted.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, r *http.Request) { s.writePage(w, r) }
	mux.HandleFunc("GET /sim", page)
	mux.HandleFunc("GET /sim/{$}", page)
	mux.HandleFunc("GET /sim/state", func(w http.ResponseWriter, r *http.Request) {
		s.writeState(w)
	})
	mux.HandleFunc("POST /sim/stop", func(w http.ResponseWriter, r *http.Request) {
		s.Stop()
		s.answerPost(w, r)
	})
	mux.HandleFunc("POST /sim/start", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Start(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.answerPost(w, r)
	})
	mux.HandleFunc("POST /sim/ha", func(w http.ResponseWriter, r *http.Request) {
		if err := s.SetHAState(hdfs.HAState(r.FormValue("state"))); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.answerPost(w, r)
	})
	mux.HandleFunc("POST /sim/set", func(w http.ResponseWriter, r *http.Request) {
		if err := s.set(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.answerPost(w, r)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10) // a form is a few fields
		mux.ServeHTTP(w, r)
	})
}

// set applies POST /sim/set's parameters, all or none.
func (s *Sim) set(r *http.Request) error {
	vals := [3]int64{-1, -1, -1}
	for i, k := range []string{"capacity", "used", "blocks"} {
		v := strings.TrimSpace(r.FormValue(k))
		if v == "" {
			continue
		}
		var err error
		if k == "blocks" {
			vals[i], err = parseCount(v)
		} else {
			vals[i], err = ParseBytes(v)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	var safemode *bool
	if v := r.FormValue("safemode"); v != "" {
		if s.cfg.Role != hdfs.RoleNameNode {
			return fmt.Errorf("safemode: a DataNode has no safe mode")
		}
		on, err := parseOnOff(v)
		if err != nil {
			return err
		}
		safemode = &on
	}
	version := r.FormValue("version")
	if len(version) > 64 || strings.ContainsFunc(version, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("version: %q is not a version such as 3.3.6 (at most 64 printable characters)", version)
	}
	version = strings.TrimSpace(version)
	if err := s.Update(vals[0], vals[1], vals[2]); err != nil {
		return err
	}
	if version != "" {
		s.SetVersion(version)
	}
	if safemode != nil {
		s.SetSafemode(*safemode)
	}
	return nil
}

// answerPost answers a POST that succeeded: the new State, or for a
// browser form a redirect back to the page.
func (s *Sim) answerPost(w http.ResponseWriter, r *http.Request) {
	if wantsHTML(r) {
		http.Redirect(w, r, "/sim", http.StatusSeeOther)
		return
	}
	s.writeState(w)
}

func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

func (s *Sim) writeState(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Heureka-Simulator", "true")
	b, _ := json.MarshalIndent(s.State(), "", "  ")
	_, _ = w.Write(append(b, '\n'))
}

// action is one thing the control API does, for the page.
type action struct {
	Path, Query string // e.g. "/sim/set", "used=3.9T"
	Does        string
}

// controlView is what GET /sim shows.
type controlView struct {
	State
	Base     string // "http://host:port", as the caller reached us
	Status   string
	Capacity string
	Used     string
	Actions  []action
	Units    string
}

func (s *Sim) view(r *http.Request) controlView {
	st := s.State()
	v := controlView{State: st, Base: "http://" + r.Host, Units: sizeUnits}
	port := s.portName() + " port"
	v.Status = "running: /jmx and the " + port + " answer"
	if !st.Running {
		v.Status = "STOPPED: /jmx and the " + port + " refuse connections, as a dead daemon's would"
	}
	v.Capacity = fmt.Sprintf("%s (%d bytes)", FormatBytes(st.Capacity), st.Capacity)
	v.Used = fmt.Sprintf("%s (%d bytes)", FormatBytes(st.Used), st.Used)
	if st.Capacity > 0 {
		v.Used += fmt.Sprintf(", %.1f%%", 100*float64(st.Used)/float64(st.Capacity))
	}
	v.Actions = []action{
		{"/sim/stop", "", "stop answering, as a crashed daemon: /jmx and the " + port + " refuse connections"},
		{"/sim/start", "", "answer again, on the same addresses"},
	}
	if st.Role == hdfs.RoleNameNode {
		next := "active"
		if st.HAState == hdfs.HAActive {
			next = "standby"
		}
		v.Actions = append(v.Actions,
			action{"/sim/ha", "state=" + next, "change HA state: active, standby, observer, initializing or stopping"},
			action{"/sim/set", "safemode=on", "enter (on) or leave (off) safe mode"})
	}
	fill := st.Capacity / 100 * 95
	v.Actions = append(v.Actions,
		action{"/sim/set", "used=" + FormatBytes(fill), "change figures: capacity=SIZE, used=SIZE, blocks=N, version=V (any of them)"})
	return v
}

// writePage answers GET /sim: text for a terminal, HTML for a browser.
func (s *Sim) writePage(w http.ResponseWriter, r *http.Request) {
	v := s.view(r)
	w.Header().Set("X-Heureka-Simulator", "true")
	w.Header().Set("Cache-Control", "no-store")
	if wantsHTML(r) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = controlPage.Execute(w, v)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	writeText(w, v)
}

func writeText(w io.Writer, v controlView) {
	fmt.Fprintf(w, "SIMULATED %s %s (heureka's simulator, not Hadoop)\n\n", v.Role, v.Hostname)
	row := func(k, val string) { fmt.Fprintf(w, "  %-10s %s\n", k, val) }
	row("state", v.Status)
	if v.HAState != "" {
		row("HA state", string(v.HAState))
		row("safe mode", onOff(v.Safemode))
	}
	row("capacity", v.Capacity)
	row("used", v.Used)
	row("blocks", strconv.FormatInt(v.Blocks, 10))
	row("version", v.Version)
	row("/jmx", "http://"+v.HTTPAddr+"/jmx")
	row("port", v.PortAddr)
	fmt.Fprintf(w, "\nActions (each POST answers with the new state as JSON; GET %s/sim/state gives it too):\n\n", v.Base)
	for _, a := range v.Actions {
		u := v.Base + a.Path
		if a.Query != "" {
			u = "'" + u + "?" + a.Query + "'"
		}
		fmt.Fprintf(w, "  curl -X POST %s\n      %s\n", u, a.Does)
	}
	fmt.Fprintf(w, "\n%s\n", v.Units)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

var controlPage = template.Must(template.New("sim").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>SIMULATED {{.Role}} {{.Hostname}}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:1.5rem;max-width:56rem;color:#222}
h1{font-size:1.3rem}table{border-collapse:collapse}th,td{text-align:left;padding:.2rem 1rem .2rem 0;vertical-align:top}
th{font-weight:600;color:#555}.stopped{color:#b00020;font-weight:600}code{font-size:.9em;overflow-wrap:anywhere}
form{display:inline}button{font:inherit;margin:.2rem .4rem .2rem 0}input{font:inherit;width:7rem}
</style></head><body>
<h1>SIMULATED {{.Role}} <code>{{.Hostname}}</code></h1>
<p>heureka's simulator, not Hadoop. It serves <a href="http://{{.HTTPAddr}}/jmx">/jmx</a> in Hadoop's shape and holds port {{.PortAddr}}.</p>
<table>
<tr><th>state</th><td{{if not .Running}} class="stopped"{{end}}>{{.Status}}</td></tr>
{{if .HAState}}<tr><th>HA state</th><td>{{.HAState}}</td></tr><tr><th>safe mode</th><td>{{if .Safemode}}on{{else}}off{{end}}</td></tr>{{end}}
<tr><th>capacity</th><td>{{.Capacity}}</td></tr>
<tr><th>used</th><td>{{.Used}}</td></tr>
<tr><th>blocks</th><td>{{.Blocks}}</td></tr>
<tr><th>version</th><td>{{.Version}}</td></tr>
</table>
<h2>Actions</h2>
<p>
<form method="post" action="/sim/stop"><button>Stop</button></form>
<form method="post" action="/sim/start"><button>Start</button></form>
{{if .HAState}}<form method="post" action="/sim/ha"><button name="state" value="active">Make active</button><button name="state" value="standby">Make standby</button></form>
<form method="post" action="/sim/set"><button name="safemode" value="on">Safe mode on</button><button name="safemode" value="off">off</button></form>{{end}}
</p>
<form method="post" action="/sim/set"><label>used <input name="used" placeholder="3.9T"></label> <label>capacity <input name="capacity" placeholder="4T"></label> <button>Set</button></form>
<p>From a terminal:</p>
<ul>{{range .Actions}}<li><code>curl -X POST '{{$.Base}}{{.Path}}{{if .Query}}?{{.Query}}{{end}}'</code>: {{.Does}}</li>{{end}}
<li><code>curl {{.Base}}/sim/state</code>: the state as JSON</li></ul>
<p>{{.Units}}</p>
</body></html>
`))

func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("safemode: %q is not on or off", v)
}

// sizeUnits says what ParseBytes accepts, for people.
const sizeUnits = "Sizes: a number of bytes, or a number (fractions allowed) and a unit: K, M, G, T, P or E, " +
	"each 1024 times the one before, as Hadoop counts (K = KB = KiB = 1024 bytes; 1T = 1024G). " +
	"E.g. 500G, 3.9T, 1.5TiB."

// units are ParseBytes' multipliers, by upper-cased first letter.
var units = map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40, 'P': 1 << 50, 'E': 1 << 60}

// ParseBytes reads a size as people type it: a whole number of bytes
// ("1024", "1024B"), or a number, fractions allowed, with a unit K, M, G,
// T, P or E, optionally followed by B or iB, in any case, with or without a
// space ("4T", "3.9T", "500 GB", "1.5TiB"). Every unit is a power of 1024,
// as in Hadoop's own figures and flags (dfsadmin -report, -setSpaceQuota),
// so "1KB" and "1KiB" are both 1024 bytes. A fraction of a unit is rounded
// to the nearest byte. Anything else, and sizes past the int64 range, are
// errors saying what is accepted.
func ParseBytes(s string) (int64, error) {
	in := strings.TrimSpace(s)
	end := 0
	for end < len(in) && (in[end] >= '0' && in[end] <= '9' || in[end] == '.') {
		end++
	}
	num, unit := in[:end], strings.ToUpper(strings.TrimSpace(in[end:]))
	bad := func() (int64, error) {
		return 0, fmt.Errorf("%q is not a size: give bytes (1024) or a number and a unit K, M, G, T, P or E, powers of 1024 as Hadoop counts (500G, 3.9T, 1.5TiB)", s)
	}
	if !isDecimal(num) {
		return bad()
	}
	mult := int64(1)
	switch {
	case unit == "" || unit == "B":
	case len(unit) >= 1 && units[unit[0]] != 0 && (len(unit) == 1 || unit[1:] == "B" || unit[1:] == "IB"):
		mult = units[unit[0]]
	default:
		return bad()
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return bad()
	}
	if mult == 1 && !r.IsInt() {
		return 0, fmt.Errorf("%q: a number of bytes is whole; use a unit for fractions (1.5K)", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	// Round half up: (2·num + den) / (2·den).
	n := new(big.Int).Mul(r.Num(), big.NewInt(2))
	n.Add(n, r.Denom())
	n.Quo(n, new(big.Int).Mul(r.Denom(), big.NewInt(2)))
	if !n.IsInt64() {
		return 0, fmt.Errorf("%q is too large: sizes end just below 8E (2^63 bytes)", s)
	}
	return n.Int64(), nil
}

// isDecimal reports whether s is digits with at most one '.', and at least
// one digit.
func isDecimal(s string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '.':
			dots++
		case s[i] >= '0' && s[i] <= '9':
			digits++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// parseCount reads a whole, non-negative count such as a number of blocks.
func parseCount(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a whole number such as 19005", s)
	}
	return n, nil
}

// FormatBytes writes n bytes for people, in the largest power-of-1024 unit
// that keeps a number of at least 1, with one decimal ("3.9T", "500.0G",
// "12B"), so that ParseBytes reads it back to within 0.05 of that unit.
func FormatBytes(n int64) string {
	const letters = "KMGTPE"
	if n < 1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	i, div := 0, int64(1024)
	for i+1 < len(letters) && n/div >= 1024 {
		i, div = i+1, div*1024
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + string(letters[i])
}
