package registry

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/heureka-project/heureka"
)

var metadataType = reflect.TypeFor[heureka.Metadata]()

// fillAll sets every field of v, recursively, to a value of its own: strings
// "f<n>", numbers n, booleans true, metadata one entry.
func fillAll(v reflect.Value, n *int) {
	*n++
	switch {
	case v.Type() == metadataType:
		v.Set(reflect.ValueOf(heureka.NewMetadata("k", strings.Repeat("v", *n))))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fillAll(v.Field(i), n)
		}
	case reflect.String:
		v.SetString("f" + strings.Repeat("x", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fillAll: a field of kind " + v.Kind().String() + ": teach fillAll and stored about it")
	}
}

// TestStoredKeepsEveryField stores an instance whose every field is set and
// checks that the copy made from the record equals it, for every status and
// action the registry stores.
func TestStoredKeepsEveryField(t *testing.T) {
	var in heureka.Instance
	n := 0
	fillAll(reflect.ValueOf(&in).Elem(), &n)
	for _, st := range heureka.Statuses {
		for _, ov := range heureka.Statuses {
			for _, act := range []heureka.ActionType{heureka.ActionAdded, heureka.ActionModified, heureka.ActionDeleted} {
				want := in
				want.Status, want.OverriddenStatus, want.ActionType = st, ov, act
				arg := want
				got := store(&arg, nil).instance()
				if !reflect.DeepEqual(*got, want) {
					t.Fatalf("stored and made again:\n got %+v\nwant %+v", *got, want)
				}
				if !reflect.DeepEqual(arg, want) {
					t.Fatalf("store changed what it stored:\n got %+v\nwant %+v", arg, want)
				}
			}
		}
	}
	// An unknown status is read as Eureka's decoder reads it.
	odd := in
	odd.Status = "SLEEPING"
	if got := store(&odd, nil).instance().Status; got != heureka.StatusUnknown {
		t.Fatalf("status SLEEPING stored as %q, want UNKNOWN", got)
	}
}

// pointerWords counts the words of t that the collector scans.
func pointerWords(t reflect.Type) int {
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return 1
	case reflect.Slice, reflect.Interface:
		return 2 // counts the words that may hold a pointer; a slice has one, an interface two
	case reflect.Array:
		return t.Len() * pointerWords(t.Elem())
	case reflect.Struct:
		n := 0
		for i := range t.NumField() {
			n += pointerWords(t.Field(i).Type)
		}
		return n
	}
	return 0
}

// TestStoredRecordIsCheapToScan pins what the record is for: three words
// for the collector to scan, where a heureka.Instance has nineteen.
func TestStoredRecordIsCheapToScan(t *testing.T) {
	if got := pointerWords(reflect.TypeFor[stored]()); got != 3 {
		t.Fatalf("a stored record has %d pointer words, want 3 (its text and two metadata blocks)", got)
	}
	if got := pointerWords(reflect.TypeFor[heureka.Instance]()); got <= 3 {
		t.Fatalf("heureka.Instance has %d pointer words: the record is no longer worth its copies", got)
	}
}

// TestStoredStringsAreOneBlock checks that a stored instance's strings come
// out unchanged and share one allocation, that an empty one stays empty,
// that registering the same strings again or changing the status reuses
// the stored block, and that a changed URL is stored as sent.
func TestStoredStringsAreOneBlock(t *testing.T) {
	r, _ := newTestRegistry(t)
	fresh := func(health string) *heureka.Instance {
		return inst(strings.Clone("HDFS-DATANODE"), strings.Clone("dn1"), func(in *heureka.Instance) {
			in.HostName = strings.Clone("dn1.example.com")
			in.IPAddr = strings.Clone("10.0.0.1")
			in.VIPAddress = strings.Clone("hdfs-datanode")
			in.HomePageURL = strings.Clone("http://dn1:9864/")
			in.StatusPageURL = strings.Clone("http://dn1:9864/jmx")
			in.HealthCheckURL = strings.Clone(health)
		})
	}
	const health = "http://dn1:9864/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo"
	mustRegister(t, r, fresh(health))
	got := get(t, r, "HDFS-DATANODE", "dn1")
	if got.ID != "dn1" || got.App != "HDFS-DATANODE" || got.HostName != "dn1.example.com" || got.IPAddr != "10.0.0.1" ||
		got.HomePageURL != "http://dn1:9864/" || got.StatusPageURL != "http://dn1:9864/jmx" || got.HealthCheckURL != health ||
		got.SecureHealthCheckURL != "" || got.VIPAddress != "hdfs-datanode" || got.DataCenter.Name != heureka.DataCenterMyOwn {
		t.Fatalf("strings changed: %+v", got)
	}
	addr := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	in := []string{got.ID, got.App, got.HostName, got.IPAddr, got.DataCenter.Name, got.HomePageURL, got.StatusPageURL, got.HealthCheckURL, got.VIPAddress}
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
	if err := r.SetStatus("HDFS-DATANODE", "dn1", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if out := get(t, r, "HDFS-DATANODE", "dn1"); out.Status != heureka.StatusOutOfService || addr(out.ID) != addr(got.ID) {
		t.Errorf("a status change: status %s, same block %v", out.Status, addr(out.ID) == addr(got.ID))
	}

	mustRegister(t, r, fresh(health+"&x=1"))
	changed := get(t, r, "HDFS-DATANODE", "dn1")
	if changed.HealthCheckURL != health+"&x=1" || changed.HostName != "dn1.example.com" || changed.ID != "dn1" {
		t.Errorf("after a new URL: %q %q %q", changed.ID, changed.HostName, changed.HealthCheckURL)
	}
}

// TestUpdateMetadataDropsJavaTypeHint checks that a metadata update
// carrying Java's type hint stores the entries and not the hint.
func TestUpdateMetadataDropsJavaTypeHint(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("HDFS-DATANODE", "a", func(in *heureka.Instance) {
		in.Metadata = heureka.MetadataOf(map[string]string{"rack": "/dc1/rack7", "version": "3.3.6"})
	}))
	if err := r.UpdateMetadata("HDFS-DATANODE", "a", map[string]string{"ha_state": "standby", "@class": "java.util.Collections$EmptyMap"}); err != nil {
		t.Fatal(err)
	}
	a := get(t, r, "HDFS-DATANODE", "a")
	if a.Metadata.Has("@class") {
		t.Errorf("an update stored Java's type hint as metadata: %v", a.Metadata)
	}
	if a.Metadata.Len() != 3 || a.Metadata.Get("rack") != "/dc1/rack7" || a.Metadata.Get("version") != "3.3.6" || a.Metadata.Get("ha_state") != "standby" {
		t.Fatalf("metadata %v, want the three entries", a.Metadata)
	}
}
