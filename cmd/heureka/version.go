package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version from the build info is used.
var version = ""

// runVersion is `heureka version`, also `heureka --version`.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", "Prints heureka's version and the Go release it was built with.", exitsTool, stderr)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "heureka %s (%s)\n", versionString(), runtime.Version())
	return err
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
