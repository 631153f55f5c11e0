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

// runVersion is `heureka version`.
func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && args[0] == "-h" {
		fmt.Fprintln(stdout, "Usage: heureka version")
		return nil
	}
	if len(args) > 0 {
		return &usageError{"version takes no arguments"}
	}
	fmt.Fprintf(stdout, "heureka %s (%s)\n", versionString(), runtime.Version())
	return nil
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
