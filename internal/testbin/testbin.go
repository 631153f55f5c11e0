// Package testbin builds the heureka binary for end-to-end tests that run
// it as a real process. It is for tests only.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Main is a TestMain body: it sets *bin to $HEUREKA_BIN, or builds
// ./cmd/heureka into a temporary directory, runs the tests, removes what it
// built and exits with the tests' code. A failed build exits 1 with the
// compiler's output.
func Main(m *testing.M, bin *string) {
	os.Exit(run(m, bin))
}

func run(m *testing.M, bin *string) int {
	if b := os.Getenv("HEUREKA_BIN"); b != "" {
		*bin = b
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "heureka-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, "heureka")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", *bin, "./cmd/heureka")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "testbin: go build ./cmd/heureka: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
