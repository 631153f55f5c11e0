package registry

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/heureka-project/heureka"
)

// TestStoredInstancesShareRepeatedStrings checks that two registrations
// decoded separately (every string its own allocation) are stored pointing
// at one copy of what they repeat, and unchanged in content.
func TestStoredInstancesShareRepeatedStrings(t *testing.T) {
	r, _ := newTestRegistry(t)
	fresh := func(id string) *heureka.Instance {
		return inst(strings.Clone("HDFS-DATANODE"), id, func(in *heureka.Instance) {
			in.VIPAddress = strings.Clone("hdfs-datanode")
			in.Status = heureka.Status(strings.Clone("UP"))
			in.Metadata = heureka.MetadataOf(map[string]string{strings.Clone("rack"): strings.Clone("/dc1/rack7"), strings.Clone("version"): strings.Clone("3.3.6")})
		})
	}
	mustRegister(t, r, fresh("a"))
	mustRegister(t, r, fresh("b"))
	if err := r.UpdateMetadata("HDFS-DATANODE", "b", map[string]string{strings.Clone("ha_state"): strings.Clone("standby")}); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateMetadata("HDFS-DATANODE", "a", map[string]string{strings.Clone("ha_state"): strings.Clone("standby")}); err != nil {
		t.Fatal(err)
	}
	a, b := get(t, r, "HDFS-DATANODE", "a"), get(t, r, "HDFS-DATANODE", "b")
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are stored as two copies", what, x, y)
		}
	}
	same("app", a.App, b.App)
	same("vip", a.VIPAddress, b.VIPAddress)
	same("status", string(a.Status), string(heureka.StatusUp))
	// Metadata is one block of text per instance, not shared strings.
	if err := r.UpdateMetadata("HDFS-DATANODE", "a", map[string]string{"@class": "java.util.Collections$EmptyMap"}); err != nil {
		t.Fatal(err)
	}
	if a = get(t, r, "HDFS-DATANODE", "a"); a.Metadata.Has("@class") {
		t.Errorf("an update stored Java's type hint as metadata: %v", a.Metadata)
	}
	if a.Metadata.Len() != 3 || a.Metadata.Get("rack") != "/dc1/rack7" || a.Metadata.Get("version") != "3.3.6" || a.Metadata.Get("ha_state") != "standby" {
		t.Fatalf("metadata %v, want the three entries unchanged", a.Metadata)
	}
}

// TestInternTableIsBounded checks that values that never repeat cannot grow
// the table past its limit.
func TestInternTableIsBounded(t *testing.T) {
	var tab interner
	for i := range 3 * internLimit {
		tab.str(strings.Repeat("x", i%7+1) + string(rune('a'+i%26)) + string(rune(i)))
		if len(tab.m) > internLimit {
			t.Fatalf("table holds %d strings, past its limit of %d", len(tab.m), internLimit)
		}
	}
	long := strings.Repeat("y", internMaxLen+1)
	if got := tab.str(long); unsafe.StringData(got) != unsafe.StringData(long) {
		t.Fatal("a string past the length limit was replaced")
	}
	if _, ok := tab.m[long]; ok {
		t.Fatal("a string past the length limit was stored")
	}
}

// TestStoredOwnStringsAreOneBlock checks that a stored instance's ID, host
// name, address and URLs come out unchanged and share one allocation, that
// an empty one stays empty, that registering the same strings again reuses
// the stored block, and that a changed URL is stored as sent.
func TestStoredOwnStringsAreOneBlock(t *testing.T) {
	r, _ := newTestRegistry(t)
	fresh := func(health string) *heureka.Instance {
		return inst("HDFS-DATANODE", strings.Clone("dn1"), func(in *heureka.Instance) {
			in.HostName = strings.Clone("dn1.example.com")
			in.IPAddr = strings.Clone("10.0.0.1")
			in.HomePageURL = strings.Clone("http://dn1:9864/")
			in.StatusPageURL = strings.Clone("http://dn1:9864/jmx")
			in.HealthCheckURL = strings.Clone(health)
		})
	}
	const health = "http://dn1:9864/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo"
	mustRegister(t, r, fresh(health))
	got := get(t, r, "HDFS-DATANODE", "dn1")
	if got.ID != "dn1" || got.HostName != "dn1.example.com" || got.IPAddr != "10.0.0.1" || got.HomePageURL != "http://dn1:9864/" ||
		got.StatusPageURL != "http://dn1:9864/jmx" || got.HealthCheckURL != health || got.SecureHealthCheckURL != "" {
		t.Fatalf("strings changed: %q %q %q %q %q %q %q", got.ID, got.HostName, got.IPAddr,
			got.HomePageURL, got.StatusPageURL, got.HealthCheckURL, got.SecureHealthCheckURL)
	}
	addr := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	in := []string{got.ID, got.HostName, got.IPAddr, got.HomePageURL, got.StatusPageURL, got.HealthCheckURL}
	for i := 1; i < len(in); i++ {
		if addr(in[i]) != addr(in[i-1])+uintptr(len(in[i-1])) {
			t.Fatalf("%q does not follow %q in one block", in[i], in[i-1])
		}
	}

	mustRegister(t, r, fresh(health))
	again := get(t, r, "HDFS-DATANODE", "dn1")
	if addr(again.ID) != addr(got.ID) || addr(again.HealthCheckURL) != addr(got.HealthCheckURL) {
		t.Error("registering the same strings again made a new block")
	}

	mustRegister(t, r, fresh(health+"&x=1"))
	changed := get(t, r, "HDFS-DATANODE", "dn1")
	if changed.HealthCheckURL != health+"&x=1" || changed.HostName != "dn1.example.com" || changed.ID != "dn1" {
		t.Errorf("after a new URL: %q %q %q", changed.ID, changed.HostName, changed.HealthCheckURL)
	}
}
