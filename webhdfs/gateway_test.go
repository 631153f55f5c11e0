package webhdfs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/webhdfs"
)

func portOf(t *testing.T, srv *httptest.Server) int {
	t.Helper()
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

func node(id string, st heureka.Status, info hdfs.NodeInfo) *heureka.Instance {
	return &heureka.Instance{ID: id, HostName: id + ".test", IPAddr: "127.0.0.1", Status: st, Metadata: info.WriteMetadata(heureka.Metadata{})}
}

// haPair is an HA pair of NameNodes nn1 and nn2 on port1 and port2: nn1
// active until flipped is set, then nn2.
func haPair(flipped *atomic.Bool, port1, port2 int) func() []*heureka.Instance {
	return func() []*heureka.Instance {
		a, b := hdfs.HAActive, hdfs.HAStandby
		if flipped.Load() {
			a, b = b, a
		}
		return []*heureka.Instance{
			node("nn1", heureka.StatusUp, hdfs.NodeInfo{HAState: a, HATransitionTime: 1, HTTPPort: port1}),
			node("nn2", heureka.StatusUp, hdfs.NodeInfo{HAState: b, HATransitionTime: 2, HTTPPort: port2}),
		}
	}
}

// TestStandbyRetriedOnNewActive: a StandbyException from the resolved
// active is retried once on the NameNode the registry names next.
func TestStandbyRetriedOnNewActive(t *testing.T) {
	var flipped atomic.Bool
	var g *webhdfs.Gateway
	var nn1Calls, nn2Calls atomic.Int32
	nn1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nn1Calls.Add(1)
		flipped.Store(true) // the failover happens while this request is in flight
		g.Notify()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"RemoteException":{"exception":"StandbyException","javaClassName":"org.apache.hadoop.ipc.StandbyException","message":"Operation category READ is not supported in state standby"}}`))
	}))
	defer nn1.Close()
	var nn2Query atomic.Value
	nn2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nn2Calls.Add(1)
		nn2Query.Store(r.URL.RawQuery)
		w.Write([]byte(`{"FileStatus":{"type":"DIRECTORY"}}`))
	}))
	defer nn2.Close()
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster = "prod"
	cfg.NameNodes = haPair(&flipped, portOf(t, nn1), portOf(t, nn2))
	cfg.DataNodes = func() []*heureka.Instance { return nil }
	var err error
	if g, err = webhdfs.New(cfg); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("GET", "/webhdfs/v1/?op=GETFILESTATUS&user.name=u&delegation=TOKEN%2Babc&doas=v", nil))
	if rec.Code != 200 || nn1Calls.Load() != 1 || nn2Calls.Load() != 1 {
		t.Fatalf("status %d, nn1 %d calls, nn2 %d calls; want 200 after one call to each: %s", rec.Code, nn1Calls.Load(), nn2Calls.Load(), rec.Body)
	}
	q, _ := url.ParseQuery(nn2Query.Load().(string))
	if q.Get("user.name") != "u" || q.Get("delegation") != "TOKEN+abc" || q.Get("doas") != "v" {
		t.Errorf("the NameNode got %v: user.name, delegation and doas must pass untouched", q)
	}
}

// TestCreateExcludesAndChecksRedirect: CREATE carries excludedatanodes for
// the DOWN and the full DataNode, and a redirect to the DOWN one is asked
// again with it excluded.
func TestCreateExcludesAndChecksRedirect(t *testing.T) {
	live := httptest.NewServer(http.NotFoundHandler()) // the live DataNode's web port, for the probe
	defer live.Close()
	dead := node("dn-dead", heureka.StatusDown, hdfs.NodeInfo{DataPort: 1001, HTTPPort: 1002})
	full := node("dn-full", heureka.StatusUp, hdfs.NodeInfo{DataPort: 2001, HTTPPort: 2002, DiskTotal: 100, DiskUsed: 95})
	ok := node("dn-ok", heureka.StatusUp, hdfs.NodeInfo{DataPort: 3001, HTTPPort: portOf(t, live), DiskTotal: 100, DiskUsed: 10})
	var seen []string
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Query().Get("excludedatanodes"))
		target := "127.0.0.1:1002" // first the dead node, as a NameNode that has not noticed would
		if len(seen) > 1 {
			target = live.Listener.Addr().String()
		}
		w.Header().Set("Location", "http://"+target+r.URL.Path+"?op=CREATE&namenoderpcaddress=nn:8020")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer nn.Close()
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster = "prod"
	cfg.NameNodes = func() []*heureka.Instance {
		return []*heureka.Instance{node("nn1", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAActive, HTTPPort: portOf(t, nn)})}
	}
	cfg.DataNodes = func() []*heureka.Instance { return []*heureka.Instance{dead, full, ok} }
	g, err := webhdfs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("PUT", "/webhdfs/v1/f?op=CREATE&excludedatanodes=10.9.9.9:9866", nil))
	if rec.Code != http.StatusTemporaryRedirect {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if want := "http://" + live.Listener.Addr().String(); rec.Header().Get("Location")[:len(want)] != want {
		t.Errorf("Location %s, want the live DataNode %s", rec.Header().Get("Location"), want)
	}
	if len(seen) != 2 || seen[0] != "10.9.9.9:9866,127.0.0.1:1001,127.0.0.1:2001" {
		t.Errorf("excludedatanodes sent: %q; want the caller's entry, then the DOWN and the full node as ip:data_port", seen)
	}
}

// TestAuth: with credentials on, reads follow the file's "reads", writes
// need credentials, and the caller's Authorization header stays with the
// gateway.
func TestAuth(t *testing.T) {
	var sawAuth atomic.Value
	sawAuth.Store("")
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth.Store(r.Header.Get("Authorization"))
		w.Write([]byte(`{"boolean":true}`))
	}))
	defer nn.Close()
	path := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, path, auth.ReadsOpen, authtest.User{User: auth.User{Name: "writer", Roles: []auth.Role{auth.RoleReader}}, Password: "tok-123", Token: true})
	store := auth.NewStore(path, nil)
	if err := store.Load(); err != nil {
		t.Fatal(err)
	}
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster, cfg.Auth = "prod", store
	cfg.NameNodes = func() []*heureka.Instance {
		return []*heureka.Instance{node("nn1", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAActive, HTTPPort: portOf(t, nn)})}
	}
	cfg.DataNodes = func() []*heureka.Instance { return nil }
	g, err := webhdfs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	serve := func(method, target, authz string) int {
		req := httptest.NewRequest(method, target, nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := serve("GET", "/webhdfs/v1/?op=GETFILESTATUS", ""); code != 200 {
		t.Errorf("open read without credentials: %d, want 200", code)
	}
	if code := serve("PUT", "/webhdfs/v1/d?op=MKDIRS", ""); code != 401 {
		t.Errorf("write without credentials: %d, want 401", code)
	}
	if code := serve("PUT", "/webhdfs/v1/d?op=MKDIRS", "Bearer wrong"); code != 401 {
		t.Errorf("write with a wrong token: %d, want 401", code)
	}
	if code := serve("PUT", "/webhdfs/v1/d?op=MKDIRS", "Bearer tok-123"); code != 200 {
		t.Errorf("write with the token: %d, want 200", code)
	}
	if got := sawAuth.Load().(string); got != "" {
		t.Errorf("the NameNode received Authorization %q; the gateway's credentials must not be forwarded", got)
	}
}

// TestNoRedirectLocationChecked: with noredirect=true the NameNode names
// the DataNode in a JSON answer; it is checked like a 307's Location.
func TestNoRedirectLocationChecked(t *testing.T) {
	live := httptest.NewServer(http.NotFoundHandler())
	defer live.Close()
	dead := node("dn-dead", heureka.StatusDown, hdfs.NodeInfo{DataPort: 1001, HTTPPort: 1002})
	ok := node("dn-ok", heureka.StatusUp, hdfs.NodeInfo{DataPort: 3001, HTTPPort: portOf(t, live)})
	calls := 0
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		target := "127.0.0.1:1002"
		if calls > 1 {
			target = live.Listener.Addr().String()
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"Location":"http://%s/webhdfs/v1/f?op=OPEN&namenoderpcaddress=nn:8020"}`, target)
	}))
	defer nn.Close()
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster = "prod"
	cfg.NameNodes = func() []*heureka.Instance {
		return []*heureka.Instance{node("nn1", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAActive, HTTPPort: portOf(t, nn)})}
	}
	cfg.DataNodes = func() []*heureka.Instance { return []*heureka.Instance{dead, ok} }
	g, err := webhdfs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("GET", "/webhdfs/v1/f?op=OPEN&noredirect=true", nil))
	var got struct{ Location string }
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &got) != nil || !strings.Contains(got.Location, live.Listener.Addr().String()) || calls != 2 {
		t.Fatalf("status %d, %d NameNode calls, body %s: want the live DataNode's Location after asking twice", rec.Code, calls, rec.Body)
	}
}

// TestBodies: a body announced with Expect: 100-continue is never read (the
// client gets its 307 first, as from a NameNode); one sent outright over
// MaxBody is refused with a RemoteException.
func TestBodies(t *testing.T) {
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://127.0.0.1:9/webhdfs/v1/f?op=CREATE")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer nn.Close()
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster, cfg.MaxBody, cfg.ProbeTimeout = "prod", 10, 0
	cfg.NameNodes = func() []*heureka.Instance {
		return []*heureka.Instance{node("nn1", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAActive, HTTPPort: portOf(t, nn)})}
	}
	cfg.DataNodes = func() []*heureka.Instance { return nil }
	g, err := webhdfs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 100)
	req := httptest.NewRequest("PUT", "/webhdfs/v1/f?op=CREATE", strings.NewReader(big))
	req.Header.Set("Expect", "100-continue")
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	if rec.Code != http.StatusTemporaryRedirect {
		t.Errorf("with Expect: 100-continue: %d %s, want the 307", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("PUT", "/webhdfs/v1/f?op=CREATE", strings.NewReader(big)))
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"RemoteException"`) {
		t.Errorf("100 bytes sent outright over a 10-byte bound: %d %s, want 413 and a RemoteException", rec.Code, rec.Body)
	}
}

// TestCreateRetriedWhenNameNodeDiesOnKeptAliveConn: the active NameNode
// reads a CREATE on a kept-alive connection and dies before answering;
// the gateway's transport sends the CREATE again (it is marked
// idempotent), the new dial is refused, and the gateway asks the NameNode
// the registry now names active, so the client gets its 307 and not a 502.
func TestCreateRetriedWhenNameNodeDiesOnKeptAliveConn(t *testing.T) {
	dn := httptest.NewServer(http.NotFoundHandler()) // the DataNode's web port, for the probe
	defer dn.Close()
	location := func(nn string) string {
		return "http://" + dn.Listener.Addr().String() + "/webhdfs/v1/f?op=CREATE&namenoderpcaddress=" + nn + ":8020"
	}
	var nn2Calls atomic.Int32
	nn2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nn2Calls.Add(1)
		w.Header().Set("Location", location("nn2"))
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer nn2.Close()
	nn1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn1Port := nn1.Addr().(*net.TCPAddr).Port
	var failedOver atomic.Bool
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster = "prod"
	cfg.NameNodes = haPair(&failedOver, nn1Port, portOf(t, nn2))
	cfg.DataNodes = func() []*heureka.Instance {
		return []*heureka.Instance{node("dn1", heureka.StatusUp, hdfs.NodeInfo{DataPort: 3001, HTTPPort: portOf(t, dn), DiskTotal: 100, DiskUsed: 10})}
	}
	g, err := webhdfs.New(cfg)
	if err != nil {
		nn1.Close()
		t.Fatal(err)
	}
	died := serveDyingNameNode(t, nn1, location("nn1"), func() {
		failedOver.Store(true) // nn2 takes over, and the registry says so
		g.Notify()
	})

	// The first CREATE leaves a kept-alive connection to nn1 in the
	// gateway's pool, and the next one goes out on it. Should the
	// transport not have pooled it (it waits only 50 ms for its own write
	// to be confirmed), that CREATE opens a second connection and the one
	// after meets the death.
	dead := func() bool {
		select {
		case <-died:
			return true
		default:
			return false
		}
	}
	var rec *httptest.ResponseRecorder
	for round := 1; !dead(); round++ {
		if round > 3 {
			t.Fatal("in 3 CREATEs none reached nn1 on a kept-alive connection: nothing was tested")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		rec = httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest("PUT", "/webhdfs/v1/f?op=CREATE", nil).WithContext(ctx))
		cancel()
		if rec.Code != http.StatusTemporaryRedirect {
			t.Fatalf("CREATE %d: status %d, want 307 to the DataNode: %s", round, rec.Code, rec.Body)
		}
	}
	if loc := rec.Header().Get("Location"); loc != location("nn2") || nn2Calls.Load() != 1 {
		t.Errorf("after nn1 died: Location %q and %d calls to nn2; want nn2's redirect after one call", loc, nn2Calls.Load())
	}
}

// serveDyingNameNode serves CREATE's first step on ln as a NameNode does,
// a 307 to location, on raw connections so that the test decides what
// each one sees. The second request on a connection (the first one a
// kept-alive connection carries) is read in full and then meets the
// NameNode's death: die runs, ln closes so that a new dial is refused,
// the returned channel closes, and the connection closes unanswered.
// Everything ends by the test's cleanup.
func serveDyingNameNode(t *testing.T, ln net.Listener, location string, die func()) <-chan struct{} {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	if d, ok := t.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	died := make(chan struct{})
	var (
		once  sync.Once
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
		ended bool // by the cleanup
	)
	serve := func(c net.Conn) {
		defer wg.Done()
		defer c.Close()
		br := bufio.NewReader(c)
		for n := 1; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return // the gateway closed the connection, or the test ended
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				return
			}
			if n > 1 {
				once.Do(func() {
					die()
					ln.Close()
					close(died)
				})
				return
			}
			if _, err := fmt.Fprintf(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", location); err != nil {
				return
			}
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by the death or the cleanup
			}
			c.SetDeadline(deadline)
			mu.Lock()
			if ended {
				c.Close()
			}
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		ended = true
		for _, c := range conns {
			c.Close() // the gateway keeps idle connections; their readers return
		}
		mu.Unlock()
		wg.Wait()
	})
	return died
}
