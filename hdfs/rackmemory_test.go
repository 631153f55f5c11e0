package hdfs

import (
	"bytes"
	"strings"
	"testing"
)

func TestRackMemoryKeepsTheNewestWithinItsBound(t *testing.T) {
	m := &RackMemory{Max: 2}
	if !m.Learn("A.example", "/r1") || m.Learn("a.example", "/r1") {
		t.Fatal("Learn: a new host must change the memory and the same answer again must not")
	}
	m.Learn("b.example", "/r2")
	m.Learn("a.example", "/r3") // a changes: now the newest
	m.Learn("c.example", "/r4") // b, the least recently changed, goes
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRackMemory(&buf, 2)
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{"A.EXAMPLE": "/r3", "c.example": "/r4", "b.example": ""} {
		if got, _ := back.Rack(host); got != want {
			t.Errorf("Rack(%s) = %q, want %q", host, got, want)
		}
	}
	if back.Len() != 2 {
		t.Errorf("Len = %d, want 2", back.Len())
	}
	// Reading with a smaller bound keeps the newest.
	buf.Reset()
	_, _ = back.WriteTo(&buf)
	one, err := ReadRackMemory(&buf, 1)
	if err != nil || one.Len() != 1 {
		t.Fatalf("ReadRackMemory max 1: %v, %v", one, err)
	}
	if r, _ := one.Rack("c.example"); r != "/r4" {
		t.Errorf("with max 1 kept %q for c, want the newest entry /r4", r)
	}
}

func TestReadRackMemoryRejectsOtherFiles(t *testing.T) {
	for _, in := range []string{"{not json", `{"version":2,"racks":[]}`, `{"applications":{}}`} {
		if _, err := ReadRackMemory(strings.NewReader(in), 0); err == nil {
			t.Errorf("ReadRackMemory(%q) = nil error, want one", in)
		}
	}
}
