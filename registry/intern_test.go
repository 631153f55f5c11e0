package registry

import (
	"strings"
	"testing"
	"unsafe"
)

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
