package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/hdfs"
)

// webSims opens two simulated DataNodes and a NameNode (in state ha)
// sharing one storage directory.
func webSims(t *testing.T, ha hdfs.HAState) (nn *Sim, dns []*Sim) {
	t.Helper()
	dir := t.TempDir()
	var addrs []DataNodeAddr
	for range 2 {
		cfg := DefaultConfig()
		cfg.WebHDFS.Dir = dir
		cfg.WebHDFS.MaxBody = 1 << 10
		dn := mustOpen(t, cfg)
		dns = append(dns, dn)
		addrs = append(addrs, DataNodeAddr{HTTP: dn.HTTPAddr(), Xfer: dn.PortAddr()})
	}
	cfg := DefaultConfig()
	cfg.Role, cfg.HAState = hdfs.RoleNameNode, ha
	cfg.WebHDFS = WebHDFSConfig{Dir: dir, DataNodes: addrs}
	return mustOpen(t, cfg), dns
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func remote(t *testing.T, body string) (exception, javaClass string) {
	t.Helper()
	var e struct {
		RemoteException struct{ Exception, JavaClassName, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.RemoteException.Message == "" {
		t.Fatalf("not a RemoteException: %s", body)
	}
	return e.RemoteException.Exception, e.RemoteException.JavaClassName
}

func TestWebHDFSCreateReadListDelete(t *testing.T) {
	nn, dns := webSims(t, hdfs.HAActive)
	base := "http://" + nn.HTTPAddr() + "/webhdfs/v1"
	// Step 1: a 307 to a DataNode that is not excluded, with the
	// parameters Hadoop's redirectURI adds.
	resp, _ := do(t, "PUT", base+"/d/f?op=create&user.name=u&excludedatanodes="+url.QueryEscape(dns[0].PortAddr()), "")
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("CREATE step 1: %s", resp.Status)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Host != dns[1].HTTPAddr() || loc.Query().Get("namenoderpcaddress") == "" || loc.Query().Get("user.name") != "u" {
		t.Fatalf("Location %s: want DataNode %s (the other is excluded), namenoderpcaddress and user.name", loc, dns[1].HTTPAddr())
	}
	// Step 2 at the DataNode: 201 with a webhdfs:// Location.
	resp, _ = do(t, "PUT", loc.String(), "hello")
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(resp.Header.Get("Location"), "webhdfs://") {
		t.Fatalf("CREATE step 2: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	if st := dns[1].State(); st.WebHDFS.Writes != 1 || st.WebHDFS.Recent[0] != "/d/f" {
		t.Errorf("DataNode state %+v: want one write of /d/f", st.WebHDFS)
	}
	// Again without overwrite: FileAlreadyExistsException, 403.
	resp, body := do(t, "PUT", loc.String(), "again")
	if ex, _ := remote(t, body); resp.StatusCode != 403 || ex != "FileAlreadyExistsException" {
		t.Errorf("create over an existing file: %s %s", resp.Status, body)
	}
	resp, body = do(t, "GET", base+"/d/f?op=GETFILESTATUS", "")
	var fs struct{ FileStatus fileStatusJSON }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &fs) != nil || fs.FileStatus.Type != "FILE" || fs.FileStatus.Length != 5 || fs.FileStatus.Permission != "644" {
		t.Errorf("GETFILESTATUS: %s %s", resp.Status, body)
	}
	resp, body = do(t, "GET", base+"/d?op=LISTSTATUS", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"pathSuffix":"f"`) || !strings.HasPrefix(body, `{"FileStatuses":{"FileStatus":[`) {
		t.Errorf("LISTSTATUS: %s %s", resp.Status, body)
	}
	// OPEN: redirect, then the bytes, with offset and length.
	resp, _ = do(t, "GET", base+"/d/f?op=OPEN&offset=1&length=3", "")
	loc, _ = url.Parse(resp.Header.Get("Location"))
	if _, body = do(t, "GET", loc.String(), ""); body != "ell" {
		t.Errorf("OPEN offset 1 length 3: %q", body)
	}
	// APPEND through the other DataNode: storage is shared.
	resp, _ = do(t, "POST", base+"/d/f?op=APPEND", "")
	loc, _ = url.Parse(resp.Header.Get("Location"))
	if resp, _ = do(t, "POST", loc.String(), " world"); resp.StatusCode != 200 {
		t.Fatalf("APPEND step 2: %s", resp.Status)
	}
	resp, _ = do(t, "GET", base+"/d/f?op=OPEN", "")
	loc, _ = url.Parse(resp.Header.Get("Location"))
	if _, body = do(t, "GET", loc.String(), ""); body != "hello world" {
		t.Errorf("after APPEND: %q", body)
	}
	// MKDIRS, DELETE non-empty without recursive, then with.
	if _, body = do(t, "PUT", base+"/e/f/g?op=MKDIRS", ""); body != `{"boolean":true}` {
		t.Errorf("MKDIRS: %s", body)
	}
	resp, body = do(t, "DELETE", base+"/d?op=DELETE", "")
	if ex, _ := remote(t, body); resp.StatusCode != 403 || ex != "PathIsNotEmptyDirectoryException" {
		t.Errorf("DELETE non-empty: %s %s", resp.Status, body)
	}
	if _, body = do(t, "DELETE", base+"/d?op=DELETE&recursive=true", ""); body != `{"boolean":true}` {
		t.Errorf("DELETE recursive: %s", body)
	}
	if resp, body = do(t, "GET", base+"/d/f?op=GETFILESTATUS", ""); resp.StatusCode != 404 {
		t.Errorf("after DELETE: %s %s", resp.Status, body)
	}
}

func TestWebHDFSErrors(t *testing.T) {
	nn, dns := webSims(t, hdfs.HAActive)
	base := "http://" + nn.HTTPAddr() + "/webhdfs/v1"
	all := dns[0].PortAddr() + "," + dns[1].PortAddr()
	for _, c := range []struct {
		name, method, url, body string
		status                  int
		exception               string
	}{
		{"unknown op", "GET", base + "/a?op=NOPE", "", 400, "IllegalArgumentException"},
		{"missing op", "GET", base + "/a", "", 400, "IllegalArgumentException"},
		{"dot-dot", "GET", base + "/a/../b?op=GETFILESTATUS", "", 400, "InvalidPathException"},
		{"bad permission", "PUT", base + "/a?op=MKDIRS&permission=999", "", 400, "IllegalArgumentException"},
		{"open a missing file", "GET", base + "/missing?op=OPEN", "", 404, "FileNotFoundException"},
		{"every DataNode excluded", "PUT", base + "/a?op=CREATE&excludedatanodes=" + url.QueryEscape(all), "", 403, "IOException"},
		{"DataNode without namenoderpcaddress", "PUT", "http://" + dns[0].HTTPAddr() + "/webhdfs/v1/a?op=CREATE", "x", 400, "IllegalArgumentException"},
		{"DataNode body over the bound", "PUT", "http://" + dns[0].HTTPAddr() + "/webhdfs/v1/big?op=CREATE&namenoderpcaddress=nn:8020", strings.Repeat("x", 2<<10), 403, "IOException"},
		{"metadata op at a DataNode", "GET", "http://" + dns[0].HTTPAddr() + "/webhdfs/v1/a?op=LISTSTATUS&namenoderpcaddress=nn:8020", "", 400, "UnsupportedOperationException"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, c.method, c.url, c.body)
			if ex, _ := remote(t, body); resp.StatusCode != c.status || ex != c.exception {
				t.Errorf("%s %s, want %d %s", resp.Status, body, c.status, c.exception)
			}
		})
	}
	// Nothing of the refused oversized write was kept.
	if resp, _ := do(t, "GET", base+"/big?op=GETFILESTATUS", ""); resp.StatusCode != 404 {
		t.Errorf("an oversized write left a file behind: %s", resp.Status)
	}
}

func TestWebHDFSStandby(t *testing.T) {
	nn, _ := webSims(t, hdfs.HAStandby)
	resp, body := do(t, "GET", "http://"+nn.HTTPAddr()+"/webhdfs/v1/?op=GETFILESTATUS", "")
	ex, class := remote(t, body)
	if resp.StatusCode != 403 || ex != "StandbyException" || class != "org.apache.hadoop.ipc.StandbyException" || !strings.Contains(body, "Operation category READ is not supported in state standby") {
		t.Errorf("standby NameNode: %s %s", resp.Status, body)
	}
	if err := nn.SetHAState(hdfs.HAActive); err != nil {
		t.Fatal(err)
	}
	if resp, body = do(t, "GET", "http://"+nn.HTTPAddr()+"/webhdfs/v1/?op=GETFILESTATUS", ""); resp.StatusCode != 200 {
		t.Errorf("after becoming active: %s %s", resp.Status, body)
	}
}

func TestParseDataNodeAddr(t *testing.T) {
	if a, err := ParseDataNodeAddr("127.0.0.1:9864=127.0.0.1:9866"); err != nil || a.HTTP != "127.0.0.1:9864" || a.Xfer != "127.0.0.1:9866" {
		t.Errorf("got %+v, %v", a, err)
	}
	for _, bad := range []string{"", "127.0.0.1:9864", "a=b", "127.0.0.1:0=127.0.0.1:1"} {
		if _, err := ParseDataNodeAddr(bad); err == nil {
			t.Errorf("ParseDataNodeAddr(%q) accepted", bad)
		}
	}
}
