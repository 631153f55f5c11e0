package hdfs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

var gatewayRE = regexp.MustCompile(`heureka gateway listening.* addr=(\S+)`)

// webCluster is a simulated HDFS cluster with WebHDFS: DataNodes dn1..dnN
// and NameNodes nn1 (active) and nn2 (standby), each with its agent,
// sharing one storage directory, and a gateway in front.
type webCluster struct {
	reg     *server
	dns     []*simDaemon
	dnAgent []*proctest.Proc
	nns     []*simDaemon
	gw      string // host:port
	gwProc  *proctest.Proc
}

func dnID(i int) string { return fmt.Sprintf("prod-dn%d.test-dc1.rack-%c", i+1, 'a'+i%2) }

func startWebCluster(t *testing.T, dataNodes int, gwArgs ...string) *webCluster {
	t.Helper()
	dir := t.TempDir()
	wc := &webCluster{reg: startServer(t)}
	var dnFlags []string
	for i := range dataNodes {
		dn := startSim(t, "datanode", "--hostname", fmt.Sprintf("dn%d.test", i+1), "--webhdfs-dir", dir, "--capacity", "4T", "--used", "1T")
		wc.dns = append(wc.dns, dn)
		dnFlags = append(dnFlags, "--webhdfs-datanode", dn.http+"="+dn.port)
		// The benchmark stops and starts the same DataNodes trial after
		// trial: flap damping would hold them DOWN longer each time.
		wc.dnAgent = append(wc.dnAgent, startAgent(t, wc.reg, "datanode", dn, fmt.Sprintf("dn%d.test", i+1), fmt.Sprintf("/dc1/rack-%c", 'a'+i%2),
			"--up-after", "200ms", "--flap-hold-max", "200ms"))
	}
	for i, ha := range []string{"active", "standby"} {
		nn := startSim(t, "namenode", append([]string{"--hostname", fmt.Sprintf("nn%d.test", i+1), "--ha-state", ha, "--webhdfs-dir", dir}, dnFlags...)...)
		wc.nns = append(wc.nns, nn)
		startAgent(t, wc.reg, "namenode", nn, fmt.Sprintf("nn%d.test", i+1), "/dc1/rack-a")
	}
	c := newClient(t, wc.reg)
	for i := range wc.dns {
		waitStatus(t, c, dnApp, dnID(i), heureka.StatusUp, 30*time.Second)
	}
	wc.gwProc = proctest.Start(t, "gateway", append([]string{"gateway", "--cluster", "prod", "--listen", "127.0.0.1:0", "--registry", wc.reg.URL()}, gwArgs...)...)
	wc.gw = wc.gwProc.WaitFor(gatewayRE, 20*time.Second)[1]
	// Ready when the gateway routes a read to the active NameNode.
	proctest.Retry(t, 30*time.Second, "the gateway to route to the active NameNode", func() error {
		resp, err := http.Get(wc.url("/", "GETFILESTATUS"))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GETFILESTATUS: %s", resp.Status)
		}
		return nil
	})
	return wc
}

func (wc *webCluster) url(path, op string, params ...string) string {
	q := url.Values{"op": {op}, "user.name": {"tester"}}
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	return "http://" + wc.gw + "/webhdfs/v1" + path + "?" + q.Encode()
}

var noFollow = &http.Client{
	Timeout:       20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// create writes data to path through the gateway in WebHDFS's two steps
// and returns the DataNode address the gateway sent the data to.
func (wc *webCluster) create(t *testing.T, path string, data []byte) (string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, wc.url(path, "CREATE", "overwrite", "true"), nil)
	resp, err := noFollow.Do(req)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		return "", fmt.Errorf("CREATE %s step 1: %s %s", path, resp.Status, body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return "", err
	}
	req, _ = http.NewRequest(http.MethodPut, loc.String(), bytes.NewReader(data))
	resp, err = noFollow.Do(req)
	if err != nil {
		return loc.Host, fmt.Errorf("CREATE %s step 2 at %s: %w", path, loc.Host, err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return loc.Host, fmt.Errorf("CREATE %s step 2 at %s: %s %s", path, loc.Host, resp.Status, body)
	}
	return loc.Host, nil
}

func (wc *webCluster) read(t *testing.T, path string) []byte {
	t.Helper()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(wc.url(path, "OPEN"))
	if err != nil {
		t.Fatalf("OPEN %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("OPEN %s: %s %s", path, resp.Status, b)
	}
	return b
}

// TestGatewayFailoverAndDeadDataNode: writes through the gateway go on
// succeeding, and never to the dead node, while a DataNode is killed and
// the NameNode fails over; everything reads back as written.
func TestGatewayFailoverAndDeadDataNode(t *testing.T) {
	t.Parallel()
	wc := startWebCluster(t, 3)
	written := map[string][]byte{}
	write := func(phase string, k int) {
		for i := range k {
			p := fmt.Sprintf("/data/%s/f%d", phase, i)
			data := bytes.Repeat([]byte(p+"\n"), 50+i)
			at, err := wc.create(t, p, data)
			if err != nil {
				t.Fatalf("%s: %v", phase, err)
			}
			if phase != "before" && at == wc.dns[0].http {
				t.Errorf("%s: %s was sent to the dead DataNode %s", phase, p, at)
			}
			written[p] = data
		}
	}
	write("before", 6)
	// SIGKILL, and wait until the process is gone: the registry does not
	// know yet (its agent reports DOWN within a second or so), the
	// NameNodes never will.
	wc.dns[0].Signal(syscall.SIGKILL)
	wc.dns[0].Exit(10 * time.Second)
	write("dn-killed", 12)
	wc.nns[0].do(t, "/sim/ha?state=standby")
	wc.nns[1].do(t, "/sim/ha?state=active")
	write("failed-over", 12)
	// The active NameNode's process dies and the standby is promoted (as
	// a failover controller would): connections are refused until the
	// registry names the new active, and no write is lost.
	wc.nns[1].Signal(syscall.SIGKILL)
	wc.nns[1].Exit(10 * time.Second)
	wc.nns[0].do(t, "/sim/ha?state=active")
	write("nn-killed", 12)
	for p, data := range written {
		if got := wc.read(t, p); !bytes.Equal(got, data) {
			t.Errorf("OPEN %s: %d bytes differ from the %d written", p, len(got), len(data))
		}
	}
	m := metricsOf(t, wc.gw)
	if m["heureka_gateway_failovers_total"] < 2 {
		t.Errorf("heureka_gateway_failovers_total = %v, want ≥ 2", m["heureka_gateway_failovers_total"])
	}
}

// metricsOf scrapes the gateway's unlabelled series.
func metricsOf(t *testing.T, gw string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + gw + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		var name string
		var v float64
		if _, err := fmt.Sscanf(line, "%s %g", &name, &v); err == nil && !strings.HasPrefix(name, "#") {
			out[name] = v
		}
	}
	return out
}

// remoteException reads a WebHDFS error answer.
func remoteException(t *testing.T, resp *http.Response) (string, string) {
	t.Helper()
	defer resp.Body.Close()
	var e struct {
		RemoteException struct{ Exception, JavaClassName, Message string }
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &e); err != nil || e.RemoteException.Exception == "" || e.RemoteException.Message == "" {
		t.Fatalf("%s: not a RemoteException: %s", resp.Status, b)
	}
	return e.RemoteException.Exception, e.RemoteException.Message
}

// TestGatewayBadInput: bad requests get WebHDFS-shaped errors from the
// gateway itself, and it goes on serving.
func TestGatewayBadInput(t *testing.T) {
	t.Parallel()
	wc := startWebCluster(t, 1)
	base := "http://" + wc.gw + "/webhdfs/v1"
	cases := []struct {
		name, method, url string
		body              io.Reader
		status            int
		exception         string
	}{
		{"unknown op", "GET", base + "/a?op=FROBNICATE", nil, 400, "IllegalArgumentException"},
		{"op with the wrong method", "GET", base + "/a?op=CREATE", nil, 400, "IllegalArgumentException"},
		{"missing op", "GET", base + "/a", nil, 400, "IllegalArgumentException"},
		{"dot-dot path", "GET", base + "/a/../../etc/passwd?op=OPEN", nil, 400, "InvalidPathException"},
		{"escaped dot-dot", "GET", base + "/a/%2e%2e/b?op=GETFILESTATUS", nil, 400, "InvalidPathException"},
		{"missing destination", "PUT", base + "/a?op=RENAME", nil, 400, "IllegalArgumentException"},
		{"oversized body", "PUT", base + "/big?op=CREATE", bytes.NewReader(make([]byte, 3<<20)), 413, "IllegalArgumentException"},
		{"not WebHDFS", "GET", "http://" + wc.gw + "/etc/passwd", nil, 404, "FileNotFoundException"},
		{"file not found", "GET", base + "/nope?op=GETFILESTATUS", nil, 404, "FileNotFoundException"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, c.url, c.body)
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
			if ex, _ := remoteException(t, resp); ex != c.exception {
				t.Errorf("exception %s, want %s", ex, c.exception)
			}
		})
	}
	// Still serving.
	resp, err := http.Get(wc.url("/", "LISTSTATUS"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after bad input: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestGatewayHungNameNode: a NameNode that accepts and never answers costs
// the caller RequestTimeout and a 504 RemoteException, and the gateway
// goes on serving.
func TestGatewayHungNameNode(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // hold it open, say nothing
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	c := newClient(t, reg)
	in := &heureka.Instance{ID: "prod-hung.test-dc1.rack-a", App: strings.ToUpper(nnApp), HostName: "hung.test", IPAddr: "127.0.0.1",
		Status: heureka.StatusUp, Port: heureka.Port{Number: 8020, Enabled: true}, VIPAddress: nnApp,
		DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn}, Lease: heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 90},
		Metadata: hdfs.NodeInfo{HAState: hdfs.HAActive, HATransitionTime: 1, HTTPPort: port}.WriteMetadata(heureka.Metadata{})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Register(ctx, in); err != nil {
		t.Fatal(err)
	}
	gw := proctest.Start(t, "gateway", "gateway", "--cluster", "prod", "--listen", "127.0.0.1:0", "--registry", reg.URL(), "--request-timeout", "1s", "--failover-wait", "500ms")
	addr := gw.WaitFor(gatewayRE, 20*time.Second)[1]
	for range 2 {
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/webhdfs/v1/x?op=GETFILESTATUS")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusGatewayTimeout && resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("hung NameNode: status %d, want 504 (or 503 before the registry is read)", resp.StatusCode)
		}
		ex, msg := remoteException(t, resp)
		t.Logf("%s: %s", ex, msg)
	}
	resp, err := http.Get("http://" + addr + "/webhdfs/v1/x?op=NOPE")
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("after a hung NameNode the gateway must still answer: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestPickerEndToEnd: a Picker fed by a watching Cache stops returning a
// killed DataNode, never returns draining, over-90% or penalised ones, and
// keeps answering from its snapshot while the registry is down; `heureka
// pick` agrees and exits 3 on a shortfall.
func TestPickerEndToEnd(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	type node struct {
		host, rack string
		args       []string
		agent      []string
	}
	nodes := []node{
		{"dn1.test", "/r1", nil, nil},
		{"dn2.test", "/r1", nil, nil},
		{"dn3.test", "/r2", nil, nil},
		{"dn4.test", "/r2", nil, nil},
		{"full.test", "/r2", []string{"--capacity", "1T", "--used", "950G"}, nil},
		{"drain.test", "/r1", nil, []string{"--admin-state", "DECOMMISSION_INPROGRESS"}},
	}
	sims := map[string]*simDaemon{}
	for _, n := range nodes {
		d := startSim(t, "datanode", append([]string{"--hostname", n.host}, n.args...)...)
		sims[n.host] = d
		startAgent(t, reg, "datanode", d, n.host, n.rack, n.agent...)
	}
	id := func(host, rack string) string { return hdfs.InstanceID("prod", host, rack) }
	c := newClient(t, reg)
	for _, n := range nodes {
		waitStatus(t, c, dnApp, id(n.host, n.rack), heureka.StatusUp, 30*time.Second)
	}
	w := newWatcher(t, reg)
	picker := &hdfs.Picker{DataNodes: func() []*heureka.Instance { return w.cache.Instances(dnApp) }}
	never := map[string]bool{id("full.test", "/r2"): true, id("drain.test", "/r1"): true}
	choose := func() []string {
		pl, _ := picker.Choose(context.Background(), hdfs.PlacementRequest{Replicas: 3})
		var ids []string
		for _, in := range pl.Nodes {
			if never[in.ID] {
				t.Fatalf("the Picker returned %s, which is full, draining or penalised", in.ID)
			}
			ids = append(ids, in.ID)
		}
		return ids
	}
	proctest.Eventually(t, 20*time.Second, "the watching Picker to find 3 DataNodes", func() bool { return len(choose()) >= 3 })
	// A reported failure is avoided.
	picker.Report(id("dn4.test", "/r2"), fmt.Errorf("write broke off"))
	never[id("dn4.test", "/r2")] = true
	for range 50 {
		choose()
	}
	// A killed DataNode stops being returned.
	sims["dn1.test"].Signal(syscall.SIGKILL)
	killed := id("dn1.test", "/r1")
	proctest.Eventually(t, 15*time.Second, "the Picker to stop returning the killed DataNode", func() bool {
		gone := true
		for range 20 {
			for _, got := range choose() {
				gone = gone && got != killed
			}
		}
		in, ok := w.cache.Instance(dnApp, killed)
		return gone && ok && in.Status != heureka.StatusUp
	})
	never[killed] = true

	// `heureka pick`: dn2 and dn3 are all that is left, so -n 2 works and
	// -n 3 falls short with exit 3 and a reason.
	out, code := runHeureka(t, "pick", "--cluster", "prod", "-n", "2", "--registry", reg.URL(), "-o", "json")
	var res struct {
		Nodes []struct{ ID string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Nodes) != 2 {
		t.Fatalf("heureka pick -n 2: exit %d, %s", code, out)
	}
	out, code = runHeureka(t, "pick", "--cluster", "prod", "-n", "3", "--registry", reg.URL(), "--exclude", "dn4.test")
	if code != 3 || !strings.Contains(out, "only 2 of 3") {
		t.Fatalf("heureka pick -n 3 with two usable nodes: exit %d, %s", code, out)
	}
	if _, code = runHeureka(t, "pick", "--cluster", "prod", "--writer", "a", "--rack", "/r1"); code != 2 {
		t.Fatalf("heureka pick --writer and --rack: exit %d, want 2", code)
	}

	// The registry goes away: the Picker answers from its snapshot.
	picker.Report(id("dn4.test", "/r2"), fmt.Errorf("write broke off again"))
	reg.Signal(syscall.SIGKILL)
	reg.Exit(10 * time.Second)
	for range 50 {
		if got := choose(); len(got) != 2 {
			t.Fatalf("with the registry down the Picker returned %v, want the 2 usable nodes", got)
		}
	}
}

// runHeureka runs the binary to completion and returns its combined output
// and exit code.
func runHeureka(t *testing.T, args ...string) (string, int) {
	t.Helper()
	p := proctest.Start(t, "heureka "+args[0], args...)
	code := p.Exit(30 * time.Second)
	return p.Output(), code
}

// TestWebHDFSNodeClient runs tests/webhdfs (the npm webhdfs client) against
// a cluster started here. It needs node and `npm ci` in tests/webhdfs.
func TestWebHDFSNodeClient(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "webhdfs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "webhdfs")); err != nil {
		t.Skip("tests/webhdfs has no node_modules: run `npm ci` there (scripts/test does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	wc := startWebCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "gateway.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GATEWAY="+wc.gw,
		"DEAD_DN_PID="+strconv.Itoa(wc.dns[0].Cmd.Process.Pid),
		"LIVE_DN_CONTROLS="+wc.dns[1].control+","+wc.dns[2].control,
		"NN_CONTROLS="+wc.nns[0].control+","+wc.nns[1].control)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test gateway.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the npm webhdfs suite failed: %v", err)
	}
}

// TestGatewayCurl: curl, the two-step CREATE by hand, through a failover.
func TestGatewayCurl(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	wc := startWebCluster(t, 2)
	local := filepath.Join(t.TempDir(), "payload")
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, curl, append([]string{"-sS", "--max-time", "20"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	locRE := regexp.MustCompile(`(?mi)^Location: (\S+)`)
	for i, phase := range []string{"before", "failed-over"} {
		if i == 1 {
			wc.nns[0].do(t, "/sim/ha?state=standby")
			wc.nns[1].do(t, "/sim/ha?state=active")
		}
		data := strings.Repeat(phase+" via curl\n", 100)
		if err := os.WriteFile(local, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		path := "/curl/" + phase
		head := run("-i", "-X", "PUT", wc.url(path, "CREATE"))
		m := locRE.FindStringSubmatch(head)
		if !strings.HasPrefix(head, "HTTP/1.1 307") || m == nil {
			t.Fatalf("CREATE step 1: want a 307 with a Location:\n%s", head)
		}
		if created := run("-i", "-X", "PUT", "-T", local, m[1]); !strings.Contains(created, "HTTP/1.1 201") {
			t.Fatalf("CREATE step 2: want 201 Created:\n%s", created)
		}
		if got := run("-L", wc.url(path, "OPEN")); got != data {
			t.Fatalf("OPEN %s through curl -L: %d bytes, want %d", path, len(got), len(data))
		}
	}
	// The one-step form people type, curl -L -T, with a body too big to
	// go through the gateway: curl asks Expect: 100-continue, gets the 307
	// first and sends the data to the DataNode only.
	big := strings.Repeat("0123456789abcdef", 256<<10) // 4 MiB
	if err := os.WriteFile(local, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run("-i", "-L", "-X", "PUT", "-T", local, "-H", "Expect: 100-continue", wc.url("/curl/big", "CREATE")); !strings.Contains(out, "HTTP/1.1 201") {
		t.Fatalf("curl -L -T: want a 201 in the end:\n%.2000s", out)
	}
	if got := run("-L", wc.url("/curl/big", "OPEN")); got != big {
		t.Fatalf("OPEN /curl/big: %d bytes, want %d", len(got), len(big))
	}
}
