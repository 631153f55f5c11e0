package dashboard

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/roles"
	"github.com/heureka-project/heureka/yarn"
)

func newRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func register(t *testing.T, reg *registry.Registry, app, host, rack string, status heureka.Status, info hdfs.NodeInfo) *heureka.Instance {
	t.Helper()
	_, cluster, _ := hdfs.ParseAppName(app)
	info.Rack = rack
	in := &heureka.Instance{ID: hdfs.InstanceID(cluster, host, rack), App: app, HostName: host, IPAddr: "10.0.0.1",
		Status: status, Metadata: info.WriteMetadata(heureka.Metadata{})}
	in.Normalize()
	if err := reg.Register(in, false); err != nil {
		t.Fatal(err)
	}
	return in
}

// fetchSummary asks ServeSummary for snap, gzipped or not, and decodes it.
func fetchSummary(t *testing.T, snap *registry.Snapshot, gz bool) *Summary {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, SummaryPath, nil)
	if gz {
		r.Header.Set("Accept-Encoding", "br, gzip;q=0.8")
	}
	w := httptest.NewRecorder()
	if err := ServeSummary(w, r, snap); err != nil {
		t.Fatal(err)
	}
	resp := w.Result()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %q", SummaryPath, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	body := io.Reader(resp.Body)
	if gz {
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Accept-Encoding gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	} else if resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("no Accept-Encoding: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	var s Summary
	if err := json.NewDecoder(body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestSummary(t *testing.T) {
	reg := newRegistry(t)
	const tib = 1 << 40
	dn := hdfs.AppName(hdfs.RoleDataNode, "prod")
	nn := hdfs.AppName(hdfs.RoleNameNode, "prod")
	register(t, reg, dn, "dn3.example.com", "/r2", heureka.StatusUp, hdfs.NodeInfo{DiskUsed: 950e9, DiskTotal: 1e12})
	register(t, reg, dn, "dn1.example.com", "/r2", heureka.StatusDown, hdfs.NodeInfo{DiskUsed: tib / 2, DiskTotal: tib})
	register(t, reg, dn, "dn2.example.com", "/r1", heureka.StatusUp, hdfs.NodeInfo{Status: string(hdfs.AdminDecommissionInProgress)})
	register(t, reg, dn, "dn4.example.com", "", heureka.StatusUp, hdfs.NodeInfo{DiskUsed: 1, DiskTotal: tib})
	register(t, reg, nn, "nn1.example.com", "", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAActive})
	register(t, reg, nn, "nn2.example.com", "", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAStandby})
	register(t, reg, "BILLING", "b1", "", heureka.StatusStarting, hdfs.NodeInfo{})

	snap := reg.Snapshot()
	s := fetchSummary(t, snap, false)
	if s.Version != snap.Version || s.Instances != 7 || len(s.Apps) != 3 {
		t.Fatalf("summary: version %d (want %d), %d instances, %d apps", s.Version, snap.Version, s.Instances, len(s.Apps))
	}
	if s.HDFS.RackKey != hdfs.MetaRack || s.HDFS.FullPercent != 90 || s.HDFS.DataNodePrefix != "HDFS-DATANODE." {
		t.Errorf("hdfs facts: %+v", s.HDFS)
	}
	apps := map[string]*AppSummary{}
	for _, a := range s.Apps {
		apps[a.Name] = a
		for _, col := range []int{len(a.Host), len(a.Status), len(a.Rack), len(a.Full), len(a.Note), len(a.Changed)} {
			if col != len(a.ID) {
				t.Fatalf("%s: columns of unequal length", a.Name)
			}
		}
	}
	d := apps["HDFS-DATANODE.PROD"]
	if d == nil || d.Role != "datanode" || d.Cluster != "prod" {
		t.Fatalf("the DataNode application: %+v", d)
	}
	if want := []string{hdfs.DefaultRack, "/r1", "/r2"}; !slices.Equal(d.Racks, want) {
		t.Errorf("racks %q, want %q", d.Racks, want)
	}
	// Rows by rack, then ID.
	wantIDs := []string{
		hdfs.InstanceID("prod", "dn4.example.com", ""), hdfs.InstanceID("prod", "dn2.example.com", "/r1"),
		hdfs.InstanceID("prod", "dn1.example.com", "/r2"), hdfs.InstanceID("prod", "dn3.example.com", "/r2"),
	}
	if !slices.Equal(d.ID, wantIDs) {
		t.Errorf("rows %q, want %q", d.ID, wantIDs)
	}
	if want := []int{0, 1, 2, 2}; !slices.Equal(d.Rack, want) {
		t.Errorf("rack column %v, want %v", d.Rack, want)
	}
	if want := []int{0, -1, 500, 950}; !slices.Equal(d.Full, want) {
		t.Errorf("fullness column %v, want %v", d.Full, want)
	}
	if want := []string{"", string(hdfs.AdminDecommissionInProgress), "", ""}; !slices.Equal(d.Note, want) {
		t.Errorf("note column %q, want %q", d.Note, want)
	}
	if d.Host[2] != "dn1.example.com" || d.Status[2] != heureka.StatusDown || d.Changed[2] == 0 {
		t.Errorf("row 2: %s %s %d", d.Host[2], d.Status[2], d.Changed[2])
	}
	// Problems: DOWN dn1 and 95%-full dn3.
	if want := []int{2, 3}; !slices.Equal(d.Problems, want) {
		t.Errorf("problems %v, want %v", d.Problems, want)
	}
	if d.Counts[heureka.StatusUp] != 3 || d.Counts[heureka.StatusDown] != 1 {
		t.Errorf("counts %v", d.Counts)
	}
	if rc := d.RackCounts[2]; rc[heureka.StatusUp] != 1 || rc[heureka.StatusDown] != 1 {
		t.Errorf("rack /r2 counts %v", rc)
	}
	n := apps["HDFS-NAMENODE.PROD"]
	if n == nil || n.Role != "namenode" || !slices.Equal(n.Note, []string{"active", "standby"}) {
		t.Errorf("the NameNode application: %+v", n)
	}
	if b := apps["BILLING"]; b == nil || b.Role != "" || !slices.Equal(b.Problems, []int{0}) || b.Full[0] != -1 {
		t.Errorf("a plain application: %+v", b)
	}

	// Gzipped, the same summary.
	if z := fetchSummary(t, snap, true); z.Version != s.Version || len(z.Apps) != 3 || !slices.Equal(z.Apps[1].ID, s.Apps[1].ID) {
		t.Errorf("gzipped summary differs: %+v", z)
	}
}

// TestSummaryMemoised checks that a summary is encoded once per registry
// version, and that a change re-encodes only the application it touched.
func TestSummaryMemoised(t *testing.T) {
	reg := newRegistry(t)
	dn := hdfs.AppName(hdfs.RoleDataNode, "memo")
	register(t, reg, dn, "dn1", "/r1", heureka.StatusUp, hdfs.NodeInfo{})
	register(t, reg, "OTHER", "o1", "", heureka.StatusUp, hdfs.NodeInfo{})

	snap := reg.Snapshot()
	p1, _, err := summaries.get(snap)
	if err != nil {
		t.Fatal(err)
	}
	parts1 := summaries.apps
	p2, _, _ := summaries.get(reg.Snapshot())
	if &p1[0] != &p2[0] {
		t.Error("the same version was encoded twice")
	}

	register(t, reg, dn, "dn2", "/r1", heureka.StatusDown, hdfs.NodeInfo{})
	p3, _, _ := summaries.get(reg.Snapshot())
	if &p3[0] == &p1[0] {
		t.Fatal("a new version was served the old summary")
	}
	parts3 := summaries.apps
	if &parts3["OTHER"].json[0] != &parts1["OTHER"].json[0] {
		t.Error("an unchanged application was encoded again")
	}
	if &parts3["HDFS-DATANODE.MEMO"].json[0] == &parts1["HDFS-DATANODE.MEMO"].json[0] {
		t.Error("the changed application kept its old summary")
	}
	var s Summary
	if err := json.Unmarshal(p3, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Apps) != 2 || len(s.Apps[0].ID) != 2 || s.Apps[0].Counts[heureka.StatusDown] != 1 {
		t.Errorf("summary after the change: %+v", s.Apps[0])
	}
}

// TestSummaryRoles: another role's application (ROLE.CLUSTER) carries its
// role and cluster, and each member's role state in the note column, by
// rack; the summary names every role heureka knows, with the states that
// lead, and the key the page reads a role state from in events.
func TestSummaryRoles(t *testing.T) {
	reg := newRegistry(t)
	app := heureka.RoleApp(yarn.RoleName, "prod")
	for _, m := range []struct{ host, rack, state string }{
		{"rm2.example.com", "/dc1/b", "standby"}, {"rm1.example.com", "/dc1/a", "Active"},
	} {
		in := &heureka.Instance{ID: m.host, App: app, HostName: m.host, IPAddr: "10.0.0.2", Status: heureka.StatusUp,
			Metadata: heureka.NewMetadata(heureka.MetaRack, m.rack, heureka.MetaRoleState, m.state)}
		in.Normalize()
		if err := reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	s := fetchSummary(t, reg.Snapshot(), false)
	if s.RoleStateKey != heureka.MetaRoleState || len(s.Roles) != len(roles.All()) {
		t.Fatalf("roleStateKey %q, %d roles; want %q and %d", s.RoleStateKey, len(s.Roles), heureka.MetaRoleState, len(roles.All()))
	}
	if i := slices.IndexFunc(s.Roles, func(r roles.Role) bool { return r.Name == yarn.RoleName }); i < 0 || !slices.Equal(s.Roles[i].Leads, []string{"active"}) {
		t.Errorf("the summary's roles lack yarn-resourcemanager led by active: %+v", s.Roles)
	}
	if len(s.Apps) != 1 {
		t.Fatalf("apps: %+v", s.Apps)
	}
	a := s.Apps[0]
	if a.Role != yarn.RoleName || a.Cluster != "prod" || !slices.Equal(a.Racks, []string{"/dc1/a", "/dc1/b"}) ||
		!slices.Equal(a.Host, []string{"rm1.example.com", "rm2.example.com"}) || !slices.Equal(a.Note, []string{"active", "standby"}) {
		t.Errorf("role application: role %q cluster %q racks %v hosts %v notes %v; want yarn-resourcemanager, prod, "+
			"[/dc1/a /dc1/b], rm1 then rm2, [active standby]", a.Role, a.Cluster, a.Racks, a.Host, a.Note)
	}
}
