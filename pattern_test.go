package heureka

import (
	"strings"
	"testing"
)

func TestCompilePattern(t *testing.T) {
	re, err := CompilePattern(`hdfs-datanode\..*`)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"HDFS-DATANODE.PROD":      true, // case-insensitive
		"hdfs-datanode.prod":      true,
		"x-hdfs-datanode.prod":    false, // anchored at the start
		"hdfs-datanode":           false,
		"hdfs-namenode.prod":      false,
		"hdfs-datanode.prod\nabc": false, // anchored at the end of the text, not of a line
	} {
		if got := re.MatchString(name); got != want {
			t.Errorf("%q: match %v, want %v", name, got, want)
		}
	}
	if re, err := CompilePattern("a|b"); err != nil || re.MatchString("ab") || !re.MatchString("B") {
		t.Errorf("alternation is not grouped inside the anchors: %v", err)
	}
	for _, bad := range []string{"", strings.Repeat("a", MaxPatternBytes+1), "(unclosed"} {
		if _, err := CompilePattern(bad); ErrorCode(err) != EINVALID {
			t.Errorf("pattern %.20q: err %v, want EINVALID", bad, err)
		}
	}
	if _, err := CompilePattern(strings.Repeat("a", MaxPatternBytes)); err != nil {
		t.Errorf("a pattern of exactly the limit: %v", err)
	}
}
