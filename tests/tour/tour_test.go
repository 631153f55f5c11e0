package tour

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2/hadoopconf"
)

// tourStep is one numbered step of the README's tour: its title and the
// command lines of its sh blocks, in order. Step 0 is the introduction
// (build and start the demo).
type tourStep struct {
	Num      int
	Title    string
	Commands []string
}

var stepRE = regexp.MustCompile(`^\*\*(\d+)\. ([^*]+)\*\*`)

// readTour returns the steps of the README's "A five-minute tour".
func readTour(t *testing.T) []tourStep {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, tour, ok := strings.Cut(string(b), "\n## A five-minute tour\n")
	if !ok {
		t.Fatal(`README.md has no "## A five-minute tour" section`)
	}
	if i := strings.Index(tour, "\n## "); i >= 0 {
		tour = tour[:i]
	}
	steps := []tourStep{{Num: 0, Title: "Build it and start the demo"}}
	inSh := false
	for _, line := range strings.Split(tour, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
		case strings.HasPrefix(line, "```"):
			inSh = false
		case inSh && strings.TrimSpace(line) != "":
			steps[len(steps)-1].Commands = append(steps[len(steps)-1].Commands, strings.TrimSpace(line))
		case !inSh:
			if m := stepRE.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				steps = append(steps, tourStep{Num: n, Title: strings.TrimSuffix(m[2], ".")})
			}
		}
	}
	for i, s := range steps {
		if s.Num != i {
			t.Fatalf("README tour: step %d is numbered %d", i, s.Num)
		}
	}
	return steps
}

// splitComment cuts a command line at its shell comment: the first '#'
// after a space, outside quotes.
func splitComment(line string) (cmd, comment string) {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && i > 0 && line[i-1] == ' ':
			return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		}
	}
	return strings.TrimSpace(line), ""
}

// tour is the state of one run of the tour.
type tour struct {
	t        *testing.T
	demo     *demo
	dir      string   // the working directory: ./heureka and README.md
	env      []string // HEUREKA_REGISTRY, once exported
	gateway  string   // the port standing for 14000
	active   string   // the NameNode the tour last made active
	location string   // the Location of the last 307
	dn1Down  bool
	watch    *background
	hooks    *hookServer
	readme   []byte
}

// run runs a README command line with the placeholders filled in.
func (r *tour) run(cmd string) (stdout, stderr string, code int) {
	r.t.Helper()
	return shell(r.t, r.dir, r.env, r.fill(cmd))
}

// fill replaces the tour's placeholders with what this demo printed.
func (r *tour) fill(cmd string) string {
	d := r.demo
	return strings.NewReplacer(
		"NN1PORT", d.Nodes["nn1"].ControlPort(),
		"NN2PORT", d.Nodes["nn2"].ControlPort(),
		"DN1CONTROL", d.Nodes["dn1"].ControlPort(),
		"PORT", d.Nodes["dn2"].ControlPort(), // step 4: "the control URL of dn2"
		"LOCATION-FROM-ABOVE", r.location,
		"127.0.0.1:14000", "127.0.0.1:"+r.gateway,
		"-p 8600 ", "-p "+d.DNSPort+" ", // step 5's DNS, on the first peer
	).Replace(cmd)
}

// check is what the README says one kind of command does.
type check struct {
	re *regexp.Regexp // matches the command as the README writes it, comment cut
	do func(r *tour, cmd string, m []string)
}

// instanceLine returns the line of `heureka instances APP` about id.
func (r *tour) instanceLine(app, id string) string {
	out, errs, code := r.run("./heureka instances " + app)
	if code != 0 {
		r.t.Fatalf("heureka instances %s: exit %d %s", app, code, errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l
		}
	}
	return ""
}

func (r *tour) waitStatus(app, id, status string, timeout time.Duration) {
	r.t.Helper()
	eventually(r.t, timeout, id+" "+status, func() string {
		if l := r.instanceLine(app, id); !strings.Contains(l, " "+status+" ") {
			return "instances says: " + l
		}
		return ""
	})
}

// simState reads a node's control state.
func (r *tour) simState(node string) map[string]any {
	out, errs, code := shell(r.t, r.dir, nil, "curl -sf "+r.demo.Nodes[node].Control+"/state")
	var st map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		r.t.Fatalf("state of %s: exit %d %s %s", node, code, out, errs)
	}
	return st
}

var checks = []check{
	{regexp.MustCompile(`^go build -o heureka \./cmd/heureka$`), func(r *tour, _ string, _ []string) {
		// TestMain built it the same way; the tour's ./heureka is that binary.
		if err := os.Symlink(heurekaBin, filepath.Join(r.dir, "heureka")); err != nil {
			r.t.Fatal(err)
		}
	}},
	{regexp.MustCompile(`^\./heureka demo$`), func(r *tour, _ string, _ []string) {
		// On free ports (--base-port 0): the machine is shared, and 8761 may
		// be taken. Every address below is this demo's.
		r.demo = startDemo(r.t)
		racks := map[string]int{}
		for _, n := range r.demo.Nodes {
			if n.Role == "DataNode" {
				racks[n.Rack]++
			}
		}
		if nn1, nn2 := r.demo.Nodes["nn1"], r.demo.Nodes["nn2"]; nn1.HA != "active" || nn2.HA != "standby" || len(racks) != 3 {
			r.t.Errorf("the demo is not nn1 active, nn2 standby and six DataNodes over three racks:\n%s", r.demo.Intro)
		}
		r.active = "nn1"
	}},
	{regexp.MustCompile(`^export HEUREKA_REGISTRY=(\S+)$`), func(r *tour, cmd string, m []string) {
		anyPort := regexp.MustCompile(`127\.0\.0\.1:\d+`)
		if a, b := anyPort.ReplaceAllString(cmd, "127.0.0.1:N"), anyPort.ReplaceAllString(r.demo.Export, "127.0.0.1:N"); a != b {
			r.t.Errorf("the README exports %q; the demo prints %q", cmd, r.demo.Export)
		}
		r.env = []string{"HEUREKA_REGISTRY=" + r.demo.Registry}
	}},
	{regexp.MustCompile(`^\./heureka apps$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		up := strings.ToUpper(out)
		if code != 0 || !strings.Contains(up, "HDFS-DATANODE.DEMO") || !strings.Contains(up, "HDFS-NAMENODE.DEMO") {
			r.t.Errorf("%s: exit %d, want both applications:\n%s%s", cmd, code, out, errs)
		}
	}},
	{regexp.MustCompile(`^\./heureka instances hdfs-datanode\.demo$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 7 {
			r.t.Fatalf("%s: exit %d, want a header and six DataNodes:\n%s%s", cmd, code, out, errs)
		}
		for _, col := range []string{"ID", "STATUS", "RACK", "DISK", "BLOCKS", "VERSION", "LAST RENEWAL"} {
			if !strings.Contains(lines[0], col) {
				r.t.Errorf("%s: no %s column: %s", cmd, col, lines[0])
			}
		}
		// Step 1: "one DataNode is over the 90% placement threshold".
		over := 0
		for _, l := range lines[1:] {
			for _, f := range strings.Fields(l) {
				if p, err := strconv.ParseFloat(strings.TrimSuffix(f, "%"), 64); strings.HasSuffix(f, "%") && err == nil && p > 90 {
					over++
				}
			}
		}
		if over != 1 {
			r.t.Errorf("%s: %d DataNodes over 90%%, the README says one:\n%s", cmd, over, out)
		}
	}},
	{regexp.MustCompile(`^\./heureka show (demo-nn1\.demo-dc1\.rack-a)$`), func(r *tour, cmd string, m []string) {
		out, errs, code := r.run(cmd)
		if code != 0 || !strings.Contains(out, m[1]) || !strings.Contains(out, "active") {
			r.t.Errorf("%s: exit %d, want nn1 with its HA state (active):\n%s%s", cmd, code, out, errs)
		}
	}},
	{regexp.MustCompile(`^\./heureka instances hdfs-datanode\.demo -o json$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		var v any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || strings.Count(out, "demo-dn") < 6 {
			r.t.Errorf("%s: exit %d, want JSON with the six DataNodes:\n%s%s", cmd, code, out, errs)
		}
	}},
	{regexp.MustCompile(`^curl -X POST http://127\.0\.0\.1:PORT/sim/stop$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		if code != 0 || !strings.Contains(out, `"running": false`) {
			r.t.Fatalf("%s: exit %d %s %s", cmd, code, out, errs)
		}
		// "Within about a second its agent notices and reports it DOWN: the
		// watch prints it". Five seconds: the machine is shared.
		r.waitStatus("hdfs-datanode.demo", "demo-dn2.demo-dc1.rack-b", "DOWN", 5*time.Second)
		if r.watch != nil {
			eventually(r.t, 5*time.Second, "the watch prints dn2 DOWN", func() string {
				for _, l := range strings.Split(r.watch.out.String(), "\n") {
					if strings.Contains(l, "demo-dn2.demo-dc1.rack-b") && strings.Contains(l, "DOWN") {
						return ""
					}
				}
				return "watch printed:\n" + r.watch.out.String()
			})
		}
		// "Bring it back with /sim/start; it is UP again once it has answered
		// steadily for 3 s."
		if _, errs, code := r.run("curl -sf -X POST http://127.0.0.1:PORT/sim/start"); code != 0 {
			r.t.Fatalf("/sim/start: %s", errs)
		}
		r.waitStatus("hdfs-datanode.demo", "demo-dn2.demo-dc1.rack-b", "UP", 15*time.Second)
	}},
	{regexp.MustCompile(`^curl -X POST 'http://127\.0\.0\.1:(NN[12])PORT/sim/ha\?state=(active|standby)'$`), func(r *tour, cmd string, m []string) {
		out, errs, code := r.run(cmd)
		if code != 0 || !strings.Contains(out, `"ha_state": "`+m[2]+`"`) {
			r.t.Fatalf("%s: exit %d %s %s", cmd, code, out, errs)
		}
		if m[2] == "active" {
			r.active = strings.ToLower(m[1])
		}
	}},
	{regexp.MustCompile(`^dig @127\.0\.0\.1 -p 8600 active\.hdfs-namenode\.demo\.service\.heureka SRV \+short$`), func(r *tour, cmd string, _ []string) {
		// "0 1 RPCPORT nn1.demo." before the failover, nn2 after it,
		// "within a second" (the agents' next probe; 5 s on a busy machine).
		want := r.active + ".demo."
		eventually(r.t, 5*time.Second, "DNS's active NameNode", func() string {
			out, errs, code := r.run(cmd)
			if f := strings.Fields(out); code != 0 || len(f) != 4 || f[0] != "0" || f[3] != want {
				return "exit " + strconv.Itoa(code) + ", want one SRV record 0 1 PORT " + want + ":\n" + out + errs
			}
			return ""
		})
	}},
	{regexp.MustCompile(`^\./heureka instances hdfs-namenode\.demo$`), func(r *tour, cmd string, _ []string) {
		// "the STATE column follows at once": within the agents' next read.
		id := "demo-" + r.active + ".demo-dc1.rack-" + map[string]string{"nn1": "a", "nn2": "b"}[r.active]
		eventually(r.t, 5*time.Second, "the STATE column", func() string {
			out, errs, code := r.run(cmd)
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); code == 0 && len(f) > 0 && f[0] == id && f[len(f)-1] == "active" {
					return ""
				}
			}
			return "exit " + strconv.Itoa(code) + ", want " + id + " active:\n" + out + errs
		})
	}},
	{regexp.MustCompile(`^\./heureka hadoop hdfs-site --cluster demo --nameservice demo$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		if code != 0 {
			r.t.Fatalf("%s: exit %d %s", cmd, code, errs)
		}
		dir := r.t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(out), 0o644); err != nil {
			r.t.Fatal(err)
		}
		conf := loadConf(r.t, dir)
		// "HA client config, active first".
		if ids := strings.Split(conf["dfs.ha.namenodes.demo"], ","); ids[0] != r.active ||
			hostOf(conf["dfs.namenode.rpc-address.demo.nn1"]) != "nn1.demo" || hostOf(conf["dfs.namenode.rpc-address.demo.nn2"]) != "nn2.demo" {
			r.t.Errorf("%s: want %s first and each ID on its own host:\n%s", cmd, r.active, out)
		}
	}},
	{regexp.MustCompile(`^\./heureka status set (\S+) OUT_OF_SERVICE$`), func(r *tour, cmd string, m []string) {
		if out, errs, code := r.run(cmd); code != 0 {
			r.t.Fatalf("%s: exit %d %s %s", cmd, code, out, errs)
		}
		r.waitStatus("hdfs-datanode.demo", m[1], "OUT_OF_SERVICE", 5*time.Second)
	}},
	{regexp.MustCompile(`^\./heureka status clear (\S+) --value UP$`), func(r *tour, cmd string, m []string) {
		if out, errs, code := r.run(cmd); code != 0 {
			r.t.Fatalf("%s: exit %d %s %s", cmd, code, out, errs)
		}
		r.waitStatus("hdfs-datanode.demo", m[1], "UP", 5*time.Second)
	}},
	{regexp.MustCompile(`^\./heureka alert --alertmanager http://127\.0\.0\.1:9093$`), func(r *tour, cmd string, _ []string) {
		// No Alertmanager here: the README's other form, --webhook, to a
		// webhook on loopback. "kill a DataNode again": HeurekaInstanceDown
		// fires, and resolves when the node is back.
		r.hooks = startHookServer(r.t)
		alert := r.start("./heureka alert --webhook " + r.hooks.URL)
		defer alert.stop(r.t)
		time.Sleep(time.Second) // let it subscribe to the event stream
		r.run("curl -sf -X POST http://127.0.0.1:PORT/sim/stop")
		eventually(r.t, 10*time.Second, "HeurekaInstanceDown fires", func() string {
			return r.hooks.want("firing", "HeurekaInstanceDown", "demo-dn2.demo-dc1.rack-b")
		})
		r.run("curl -sf -X POST http://127.0.0.1:PORT/sim/start")
		eventually(r.t, 15*time.Second, "HeurekaInstanceDown resolves", func() string {
			return r.hooks.want("resolved", "HeurekaInstanceDown", "demo-dn2.demo-dc1.rack-b")
		})
	}},
	{regexp.MustCompile(`^\./heureka pick --cluster demo -n 3 --writer dn1\.demo$`), func(r *tour, cmd string, _ []string) {
		eventually(r.t, 10*time.Second, cmd, func() string {
			out, errs, code := r.run(cmd)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			switch {
			case code != 0 || len(lines) != 4:
				return "exit " + strconv.Itoa(code) + ", want a header and three DataNodes:\n" + out + errs
			case !r.dn1Down && !strings.Contains(lines[1], "dn1.demo"):
				return "the writer's own node first:\n" + out
			case r.dn1Down && strings.Contains(out, "dn1.demo"):
				return "dn1 is stopped and still chosen:\n" + out
			}
			return ""
		})
	}},
	{regexp.MustCompile(`^\./heureka pick --cluster demo -n 3 --rack /dc1/rack-b --probe -o json$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		var res struct {
			Nodes []struct{ Rack string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Nodes) != 3 || res.Nodes[0].Rack != "/dc1/rack-b" {
			r.t.Errorf("%s: exit %d, want three DataNodes, the first on /dc1/rack-b:\n%s%s", cmd, code, out, errs)
		}
	}},
	{regexp.MustCompile(`^curl -X POST http://127\.0\.0\.1:DN1CONTROL/sim/stop$`), func(r *tour, cmd string, _ []string) {
		if out, errs, code := r.run(cmd); code != 0 || !strings.Contains(out, `"running": false`) {
			r.t.Fatalf("%s: exit %d %s %s", cmd, code, out, errs)
		}
		r.dn1Down = true
		r.waitStatus("hdfs-datanode.demo", "demo-dn1.demo-dc1.rack-a", "DOWN", 5*time.Second)
	}},
	{regexp.MustCompile(`^\./heureka pick --cluster demo -n 9; echo "exit \$\?"$`), func(r *tour, cmd string, _ []string) {
		out, errs, _ := r.run(cmd)
		// "too many: prints what it has, says why, exit 3"
		if !strings.HasSuffix(strings.TrimSpace(out), "exit 3") || strings.Count(out, ".demo") < 1 || !strings.Contains(errs, "only") {
			r.t.Errorf("%s: want what it has, why, and exit 3:\nstdout:\n%s\nstderr:\n%s", cmd, out, errs)
		}
	}},
	{regexp.MustCompile(`^\./heureka gateway --cluster demo --listen 127\.0\.0\.1:14000 &$`), func(r *tour, cmd string, _ []string) {
		gw := r.start(strings.TrimSuffix(cmd, "&"))
		r.t.Cleanup(func() { gw.stop(r.t) })
		eventually(r.t, 10*time.Second, "the gateway listens", func() string {
			c, err := net.Dial("tcp", "127.0.0.1:"+r.gateway)
			if err != nil {
				return err.Error() + "; gateway said: " + gw.out.String()
			}
			c.Close()
			return ""
		})
	}},
	{regexp.MustCompile(`^curl -i -X PUT '(http://127\.0\.0\.1:14000/webhdfs/v1/tmp/a\.txt\?op=CREATE&user\.name=me)'$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		status, loc := httpHead(out)
		// "307, Location: a live DataNode": dn1 is stopped since step 8.
		dn1 := r.simState("dn1")["http"].(string)
		if code != 0 || status != 307 || loc == "" || strings.Contains(loc, dn1) {
			r.t.Fatalf("%s: exit %d, status %d, Location %q (dn1, stopped, is %s):\n%s%s", cmd, code, status, loc, dn1, out, errs)
		}
		r.location = loc
	}},
	{regexp.MustCompile(`^curl -i -X PUT -T README\.md 'LOCATION-FROM-ABOVE'$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		if status, _ := httpHead(out); code != 0 || status != 201 {
			r.t.Fatalf("%s: exit %d, status %d, want 201:\n%s%s", cmd, code, status, out, errs)
		}
	}},
	{regexp.MustCompile(`^curl -L 'http://127\.0\.0\.1:14000/webhdfs/v1/tmp/a\.txt\?op=OPEN&user\.name=me'$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		if code != 0 || out != string(r.readme) {
			r.t.Errorf("%s: exit %d, want README.md back (%d bytes), got %d bytes:\n%.300s%s", cmd, code, len(r.readme), len(out), out, errs)
		}
	}},
	{regexp.MustCompile(`^curl --path-as-is 'http://127\.0\.0\.1:14000/webhdfs/v1/tmp/\.\./etc\?op=OPEN'$`), func(r *tour, cmd string, _ []string) {
		// As written, plus the status code on a line of its own.
		out, errs, code := r.run(cmd + ` -w '\n%{http_code}'`)
		if code != 0 || !strings.Contains(out, `"RemoteException"`) || !strings.HasSuffix(out, "\n400") {
			r.t.Errorf("%s: exit %d, want a WebHDFS RemoteException with 400:\n%s%s", cmd, code, out, errs)
		}
	}},
	{regexp.MustCompile(`^curl -s http://127\.0\.0\.1:14000/metrics \| grep heureka_gateway_failovers_total$`), func(r *tour, cmd string, _ []string) {
		out, errs, code := r.run(cmd)
		if code != 0 || !regexp.MustCompile(`(?m)^heureka_gateway_failovers_total 1$`).MatchString(out) {
			r.t.Errorf("%s: exit %d, the README says 1:\n%s%s", cmd, code, out, errs)
		}
	}},
}

// TestTour runs the README's five-minute tour as written.
func TestTour(t *testing.T) {
	needTools(t, "bash", "curl", "dig")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	r := &tour{t: t, dir: t.TempDir(), readme: readme, gateway: freePort(t)}
	if err := os.WriteFile(filepath.Join(r.dir, "README.md"), readme, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, step := range readTour(t) {
		t.Logf("step %d: %s", step.Num, step.Title)
		switch step.Num {
		case 1: // "Open the dashboard": every peer serves the page.
			for _, u := range append([]string{r.demo.Dashboard}, regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindAllString(r.demo.Intro, 3)[1:]...) {
				resp, err := http.Get(u)
				if err != nil {
					t.Fatalf("dashboard %s: %v", u, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.Contains(string(body), "<html") {
					t.Errorf("dashboard %s: %d", u, resp.StatusCode)
				}
			}
		case 3: // "./heureka watch prints every change as it happens".
			r.watch = r.start("./heureka watch")
			t.Cleanup(func() { r.watch.stop(t) })
		}
		for _, line := range step.Commands {
			cmd, _ := splitComment(line)
			matched := false
			for _, c := range checks {
				if m := c.re.FindStringSubmatch(cmd); m != nil {
					t.Logf("  $ %s", cmd)
					c.do(r, cmd, m)
					matched = true
					break
				}
			}
			if !matched {
				t.Errorf("step %d runs %q, which tests/tour has no check for: add one to its checks", step.Num, cmd)
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	// 10. "Ctrl-C in the demo's terminal ... Nothing is left running."
	if err := r.demo.stop(t); err != nil {
		t.Errorf("the demo exited with %v after Ctrl-C; stderr:\n%s", err, r.demo.stderr)
	}
	for _, n := range r.demo.Nodes {
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSuffix(n.Control, "/sim"), "http://"), time.Second); err == nil {
			c.Close()
			t.Errorf("%s's control port still answers after Ctrl-C", n.Name)
		}
	}
}

// httpHead reads the final status code and Location of `curl -i` output,
// past any 100 Continue.
func httpHead(out string) (int, string) {
	rd := bufio.NewReader(strings.NewReader(out))
	for {
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			return 0, ""
		}
		resp.Body.Close()
		if resp.StatusCode >= 200 {
			return resp.StatusCode, resp.Header.Get("Location")
		}
	}
}

// loadConf reads a Hadoop configuration directory with colinmarc/hdfs.
func loadConf(t *testing.T, dir string) map[string]string {
	t.Helper()
	conf, err := hadoopconf.Load(dir)
	if err != nil || conf == nil {
		t.Fatalf("hadoopconf.Load(%s): %v, %v", dir, conf, err)
	}
	return conf
}

// background is a tour command left running, as with '&'.
type background struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	out    *syncBuffer
	once   sync.Once
}

// start runs a README command line in the background.
func (r *tour) start(line string) *background {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// exec replaces bash, so that stopping it stops the program.
	cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+r.fill(line))
	cmd.Dir, cmd.Env = r.dir, append(os.Environ(), r.env...)
	b := &background{cmd: cmd, cancel: cancel, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = b.out, b.out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("%s: %v", line, err)
	}
	return b
}

func (b *background) stop(t *testing.T) {
	b.once.Do(func() {
		b.cancel()
		_ = b.cmd.Wait()
	})
}

// hookServer is a webhook on loopback that keeps what it is sent.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	alerts []map[string]any
}

func startHookServer(t *testing.T) *hookServer {
	h := &hookServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var batch []map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&batch); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.alerts = append(h.alerts, batch...)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// want returns "" once an alert with status and alertname naming instance
// has come, else what has come.
func (h *hookServer) want(status, name, instance string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.alerts {
		b, _ := json.Marshal(a)
		if a["status"] == status && strings.Contains(string(b), `"alertname":"`+name+`"`) && strings.Contains(string(b), instance) {
			return ""
		}
	}
	b, _ := json.Marshal(h.alerts)
	return "the webhook got " + string(b)
}
