package heureka_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

func TestMetadataKeepsEachKeysLastValueInOrder(t *testing.T) {
	md := heureka.NewMetadata("rack", "/r1", "disk_used", "10", "rack", "/r2", "", "empty key", "z", "")
	want := [][2]string{{"", "empty key"}, {"disk_used", "10"}, {"rack", "/r2"}, {"z", ""}}
	var got [][2]string
	for k, v := range md.All() {
		got = append(got, [2]string{k, v})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	if md.Len() != 4 || md.Size() != len("empty key")+len("disk_used10")+len("rack/r2")+len("z") {
		t.Errorf("Len %d, Size %d", md.Len(), md.Size())
	}
	if n := testing.AllocsPerRun(10, func() { heureka.NewMetadata("rack", "/r1", "disk_used", "10") }); n != 1 {
		t.Errorf("NewMetadata made %v heap objects, want one block", n)
	}
	var empty heureka.Metadata
	if empty.Len() != 0 || empty.Size() != 0 || heureka.NewMetadata("", "").Size() != 0 {
		t.Error("an empty Metadata, or one with an empty key and value, has a size")
	}
	if v, ok := md.Lookup("z"); !ok || v != "" {
		t.Errorf(`Lookup("z") = %q, %v: an empty value is still present`, v, ok)
	}
	if v, ok := md.Lookup("ra"); ok || v != "" || md.Get("absent") != "" || md.Has("rackx") {
		t.Error("a key that is absent was found")
	}
	if md.String() != "map[:empty key disk_used:10 rack:/r2 z:]" {
		t.Errorf("String() = %s", md)
	}
}

func TestMetadataIsNeverChangedInPlace(t *testing.T) {
	base := heureka.NewMetadata("a", "1", "b", "2")
	with := base.With("b", "3", "c", "4")
	without := base.Without("a", "missing")
	if got := base.Map(); !maps.Equal(got, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("base changed to %v", got)
	}
	if got := with.Map(); !maps.Equal(got, map[string]string{"a": "1", "b": "3", "c": "4"}) {
		t.Errorf("With = %v", got)
	}
	if got := without.Map(); !maps.Equal(got, map[string]string{"b": "2"}) {
		t.Errorf("Without = %v", got)
	}
	if !base.Without("missing").Equal(base) || !base.With().Equal(base) {
		t.Error("a change that changes nothing changed something")
	}
}

// TestMetadataHasOneFormForEachContent matters because instances are
// compared with reflect.DeepEqual and Equal: however a Metadata was built,
// the same content must be the same value, and empty must be the zero value.
func TestMetadataHasOneFormForEachContent(t *testing.T) {
	a := heureka.NewMetadata("x", "1", "y", "2")
	b := heureka.MetadataOf(map[string]string{"y": "2", "x": "1"})
	c := heureka.NewMetadata("y", "0").With("x", "1", "y", "2")
	for _, m := range []heureka.Metadata{b, c} {
		if !a.Equal(m) || !reflect.DeepEqual(a, m) {
			t.Errorf("%v and %v hold the same but differ", a, m)
		}
	}
	for _, empty := range []heureka.Metadata{heureka.NewMetadata(), heureka.MetadataOf(nil), a.Without("x", "y"), heureka.Metadata{}.With()} {
		if !reflect.DeepEqual(empty, heureka.Metadata{}) || !empty.IsZero() {
			t.Errorf("empty metadata %#v is not the zero value", empty)
		}
	}
	if a.Equal(a.With("x", "9")) || a.Equal(a.Without("y")) || a.Equal(heureka.NewMetadata("x1", "", "y", "2")) {
		t.Error("different metadata compared equal")
	}
}

func TestNewMetadataRejectsAnOddList(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewMetadata with three strings did not panic")
		}
	}()
	heureka.NewMetadata("a", "1", "b")
}

func TestMetadataJSON(t *testing.T) {
	md := heureka.NewMetadata("quote\"d", "line\nbreak", "uni", "Grüße", "nul", "a\x00b")
	b, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"nul":"a\u0000b","quote\"d":"line\nbreak","uni":"Grüße"}` {
		t.Errorf("Marshal = %s", b)
	}
	var back heureka.Metadata
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(md) {
		t.Errorf("Unmarshal(%s) = %v, %v", b, back, err)
	}
	if err := json.Unmarshal([]byte(`null`), &back); err != nil || back.Len() != 0 {
		t.Errorf("null = %v, %v; want empty", back, err)
	}
	if err := json.Unmarshal([]byte(`{"a":1}`), &back); err == nil {
		t.Error("a number value was taken")
	}
	ev, _ := json.Marshal(heureka.Event{Type: heureka.EventRegistered})
	if string(ev) != `{"seq":0,"type":"registered","time":0}` {
		t.Errorf("an event without metadata encodes as %s", ev)
	}
}

// TestMetadataAgreesWithAMap applies random changes to a Metadata and to a
// map side by side, and compares every read after each.
func TestMetadataAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"", "a", "ab", "b", "rack", "disk_used", "z", "zz", "é"}
	for round := range 200 {
		md, model := heureka.Metadata{}, map[string]string{}
		for step := range 30 {
			before, was := md, maps.Clone(model)
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(3) == 0 {
				md = md.Without(k)
				delete(model, k)
			} else {
				v := fmt.Sprint(round, step)
				md = md.With(k, v)
				model[k] = v
			}
			if !maps.Equal(md.Map(), model) || md.Len() != len(model) {
				t.Fatalf("round %d step %d: %v, want %v", round, step, md, model)
			}
			if got := slices.Collect(md.Keys()); !slices.Equal(got, slices.Sorted(maps.Keys(model))) {
				t.Fatalf("keys %q are not in order", got)
			}
			for _, k := range keys {
				v, ok := md.Lookup(k)
				mv, mok := model[k]
				if v != mv || ok != mok || md.Has(k) != mok {
					t.Fatalf("round %d step %d: Lookup(%q) = %q, %v; want %q, %v", round, step, k, v, ok, mv, mok)
				}
			}
			if !heureka.MetadataOf(model).Equal(md) {
				t.Fatalf("round %d step %d: MetadataOf(%v) differs from %v", round, step, model, md)
			}
			var changed []string
			for _, k := range keys {
				v, ok := model[k]
				if wv, wok := was[k]; v != wv || ok != wok {
					changed = append(changed, k)
				}
			}
			slices.Sort(changed)
			if got := before.ChangedKeys(md); !slices.Equal(got, changed) {
				t.Fatalf("round %d step %d: ChangedKeys from %v to %v = %q, want %q", round, step, before, md, got, changed)
			}
		}
	}
}

func TestAllStopsWhenAsked(t *testing.T) {
	md := heureka.NewMetadata("a", "1", "b", "2", "c", "3")
	n := 0
	for range md.All() {
		n++
		break
	}
	for range md.Keys() {
		n++
		break
	}
	if n != 2 {
		t.Errorf("iterated %d times, want 2", n)
	}
}

// BenchmarkMetadata compares a DataNode's twenty entries as Metadata and as
// the map it replaced: the heap each holds, and a lookup.
func BenchmarkMetadata(b *testing.B) {
	kv := make([]string, 0, 40)
	for i := range 20 {
		kv = append(kv, fmt.Sprintf("key_number_%02d", i), fmt.Sprintf("value-%d", 1000000+i*7919))
	}
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b.Run("build/metadata", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = heureka.NewMetadata(kv...)
		}
	})
	b.Run("build/map", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = maps.Clone(m)
		}
	})
	md := heureka.NewMetadata(kv...)
	b.Run("get/metadata", func(b *testing.B) {
		for i := range b.N {
			_ = md.Get(kv[2*(i%20)])
		}
	})
	b.Run("get/map", func(b *testing.B) {
		for i := range b.N {
			_ = m[kv[2*(i%20)]]
		}
	})
}

// TestValidateMetadataHoldsTheLimits checks each limit at its edge: entries,
// key length, keys plus values in bytes, empty keys and control characters.
func TestValidateMetadataHoldsTheLimits(t *testing.T) {
	l := heureka.DefaultLimits()
	pairs := func(n, valueLen int) heureka.Metadata {
		kv := make([]string, 0, 2*n)
		for i := range n {
			kv = append(kv, fmt.Sprintf("k%03d", i), strings.Repeat("v", valueLen))
		}
		return heureka.NewMetadata(kv...)
	}
	perEntry := (l.MaxMetadataBytes / l.MaxMetadata) - 4 // a value that fills the byte limit exactly
	for _, c := range []struct {
		name string
		md   heureka.Metadata
		want string // "" for valid
	}{
		{"at every limit", pairs(l.MaxMetadata, perEntry), ""},
		{"one entry too many", pairs(l.MaxMetadata+1, 1), "entries"},
		{"one byte too many", pairs(l.MaxMetadata, perEntry).With("k000", strings.Repeat("v", perEntry+1)), "bytes"},
		{"a key at its limit", heureka.NewMetadata(strings.Repeat("k", l.MaxMetadataKeyLen), "v"), ""},
		{"a key too long", heureka.NewMetadata(strings.Repeat("k", l.MaxMetadataKeyLen+1), "v"), "key"},
		{"an empty key", heureka.NewMetadata("", "v"), "empty key"},
		{"a control character", heureka.NewMetadata("rack", "/r1\n"), "control character"},
	} {
		err := heureka.ValidateMetadata(c.md, l)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || heureka.ErrorCode(err) != heureka.EINVALID):
			t.Errorf("%s: got %v, want an EINVALID error about %q", c.name, err, c.want)
		}
	}
}
