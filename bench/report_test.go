package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReportKeepsTheHandWrittenPart writes a report over a copy of the
// real docs/benchmarks.md and checks that everything from keptMarker on,
// the hand-written sections and their History, comes through byte for
// byte while the generated part before it is replaced.
func TestReportKeepsTheHandWrittenPart(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page, []byte(keptMarker)); n != 1 {
		t.Fatalf("docs/benchmarks.md holds the kept marker %d times, want once", n)
	}
	kept := page[bytes.Index(page, []byte(keptMarker)):]
	if !bytes.Contains(kept, []byte("\n## History\n")) {
		t.Fatal("docs/benchmarks.md has no \"## History\" section after the kept marker: bench would drop it")
	}

	out := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := os.WriteFile(out, page, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := DefaultPlan("tiny")
	if err != nil {
		t.Fatal(err)
	}
	const command = "go test TestReportKeepsTheHandWrittenPart"
	res := &results{Plan: p, Date: time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC), Command: command}
	if err := writeReport(out, res); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(got, []byte(keptMarker))
	if i < 0 {
		t.Fatal("the written report lost the kept marker")
	}
	if !bytes.Equal(got[i:], kept) {
		t.Errorf("the part from the kept marker on changed: %d bytes written, %d in the page", len(got[i:]), len(kept))
	}
	if !bytes.Contains(got[:i], []byte(command)) {
		t.Errorf("the generated part was not rewritten: no %q before the marker", command)
	}
}
