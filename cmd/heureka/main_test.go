package main

import (
	"testing"

	"github.com/heureka-project/heureka/internal/proctest"
)

// TestMain removes the binary that tests running it as a process build.
func TestMain(m *testing.M) { proctest.Main(m) }
