package metrics_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

var (
	simRE     = regexp.MustCompile(`heureka sim listening.* http=(\S+) port=(\S+) control=(\S+)`)
	gatewayRE = regexp.MustCompile(`heureka gateway listening.* addr=(\S+)`)
)

// TestEveryNamedMetricIsExported scrapes every process's /metrics and fails
// naming each metric the rules or the dashboard use that no scrape exports.
func TestEveryNamedMetricIsExported(t *testing.T) {
	root := filepath.Join("..", "..", "packaging")
	used := map[string][]string{} // metric name -> where it is used
	rules, err := os.ReadFile(filepath.Join(root, "prometheus", "heureka.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ruleExprs(string(rules)) {
		for _, n := range metricNames(e) {
			used[n] = append(used[n], "heureka.rules.yml: "+e)
		}
	}
	dash, err := os.ReadFile(filepath.Join(root, "grafana", "heureka.json"))
	if err != nil {
		t.Fatal(err)
	}
	exprs, err := dashboardExprs(dash)
	if err != nil {
		t.Fatalf("packaging/grafana/heureka.json: %v", err)
	}
	for _, e := range exprs {
		for _, n := range metricNames(e) {
			used[n] = append(used[n], "heureka.json: "+e)
		}
	}
	if len(used) < 10 {
		t.Fatalf("found only %d metric names in the rules and the dashboard (%v): the extraction is broken", len(used), used)
	}

	// Two registry peers; the first also lists a third that is not
	// running, so that heureka_peer_up 0 is exported too.
	a, b, gone := proctest.FreeAddr(t, "127.0.0.1"), proctest.FreeAddr(t, "127.0.0.1"), proctest.FreeAddr(t, "127.0.0.1")
	peerURL := func(addr string) string { return "http://" + addr + "/eureka" }
	proctest.Start(t, "server a", "server", "--listen", a, "--peers", peerURL(b)+","+peerURL(gone)).WaitAddr(20 * time.Second)
	proctest.Start(t, "server b", "server", "--listen", b, "--peers", peerURL(a)).WaitAddr(20 * time.Second)

	// An HDFS NameNode pair and a DataNode, simulated, each with its agent.
	for i, ha := range []string{"active", "standby"} {
		host := fmt.Sprintf("nn%d.test", i+1)
		sim := startSim(t, "namenode", "--hostname", host, "--ha-state", ha)
		startAgent(t, peerURL(a), "namenode", sim, "--rpc-port", host)
	}
	dn := startSim(t, "datanode", "--hostname", "dn1.test")
	startAgent(t, peerURL(a), "datanode", dn, "--data-port", "dn1.test")

	gw := proctest.Start(t, "gateway", "gateway", "--cluster", "prod", "--listen", "127.0.0.1:0", "--registry", peerURL(a)).
		WaitFor(gatewayRE, 20*time.Second)[1]

	// Wait for the state every rule needs to have series: the HDFS nodes
	// registered and replicated, the peer up, the stopped one down.
	var scrapes map[string]string
	proctest.Eventually(t, 60*time.Second, "the registry to hold the HDFS nodes and see its peers", func() bool {
		scrapes = map[string]string{"server a": scrape(t, a), "server b": scrape(t, b), "gateway": scrape(t, gw)}
		for _, s := range []string{"server a", "server b"} {
			if !strings.Contains(scrapes[s], `heureka_hdfs_namenodes{cluster="prod",ha_state="active"} 1`) ||
				!strings.Contains(scrapes[s], `heureka_hdfs_datanodes{cluster="prod",rack="/dc1/rack-a",status="UP"} 1`) {
				return false
			}
		}
		return strings.Contains(scrapes["server a"], `heureka_peer_up{peer="`+peerURL(b)+`"} 1`) &&
			strings.Contains(scrapes["server a"], `heureka_peer_up{peer="`+peerURL(gone)+`"} 0`)
	})

	exported := map[string]bool{}
	for _, body := range scrapes {
		for n := range exportedNames(body) {
			exported[n] = true
		}
	}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range used {
			if !yield(n) {
				return
			}
		}
	}) {
		if !exported[n] {
			t.Errorf("%s is used but no server, peer or gateway scrape exports it; used in:\n\t%s", n, strings.Join(used[n], "\n\t"))
		}
	}
	t.Logf("%d metric names used by the rules and the dashboard, all checked against %d scrapes", len(used), len(scrapes))
}

type simDaemon struct{ http, port string }

func startSim(t *testing.T, role string, args ...string) simDaemon {
	t.Helper()
	m := proctest.Start(t, "sim "+role, append([]string{"sim", role}, args...)...).WaitFor(simRE, 20*time.Second)
	return simDaemon{http: m[1], port: m[2]}
}

func startAgent(t *testing.T, registry, role string, d simDaemon, portFlag, host string) {
	t.Helper()
	proctest.Start(t, "agent "+host, "agent", "--role", role, "--cluster", "prod", "--registry", registry,
		"--jmx", "http://"+d.http, portFlag, d.port[strings.LastIndexByte(d.port, ':')+1:],
		"--host", host, "--ip", "127.0.0.1", "--rack", "/dc1/rack-a")
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Logf("scrape %s: %v", addr, err)
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Logf("scrape %s: %s %v", addr, resp.Status, err)
	}
	return string(b)
}

// exportedNames returns the series names a scrape holds: each sample's
// name, and for a histogram or summary (# TYPE) its base name as well, so
// that a rule may name either.
func exportedNames(body string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.SplitSeq(body, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = true
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}

// ruleExprs returns every expr of a rules file, folded block scalars
// (expr: >-) included.
func ruleExprs(yaml string) []string {
	var out []string
	lines := strings.Split(yaml, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimLeft(l, " ")
		rest, ok := strings.CutPrefix(trimmed, "expr:")
		if !ok {
			continue
		}
		indent := len(l) - len(trimmed)
		rest = strings.TrimSpace(rest)
		if rest == ">-" || rest == ">" || rest == "|" || rest == "|-" {
			rest = ""
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent) {
				i++
				rest += " " + strings.TrimSpace(lines[i])
			}
		}
		out = append(out, strings.Trim(strings.TrimSpace(rest), `'"`))
	}
	return out
}

// dashboardExprs returns every "expr" of a Grafana dashboard's targets.
func dashboardExprs(data []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "expr" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out, nil
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// metricNames returns the metric names in a PromQL expression: identifiers
// that are not functions, aggregations, keywords, label names or strings.
// Dashboard variables ($__interval) are not identifiers here.
func metricNames(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	e = regexp.MustCompile(`\$\w+`).ReplaceAllString(e, " ")
	var out []string
	for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
		name := strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(m[0]), "("), " ")
		if m[1] != "" || promKeywords[strings.ToLower(name)] {
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// TestMetricNames checks the PromQL name extraction on the shapes the rules
// and dashboard use.
func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`heureka_peer_up == 0`: {"heureka_peer_up"},
		`max by (app) (heureka_instances{app=~"HDFS-DATANODE\\..*", status="DOWN"}) > 0`:                                   {"heureka_instances"},
		`heureka_renews_expected_per_minute > 0 and heureka_renews_last_minute < 0.5 * heureka_renews_expected_per_minute`: {"heureka_renews_expected_per_minute", "heureka_renews_last_minute"},
		`histogram_quantile(0.99, sum by (le, route) (rate(heureka_http_request_duration_seconds_bucket[5m])))`:            {"heureka_http_request_duration_seconds_bucket"},
		`increase(heureka_gateway_failovers_total[$__rate_interval]) > 3`:                                                  {"heureka_gateway_failovers_total"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}
