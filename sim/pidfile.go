package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WritePIDFile writes this process's PID and a newline to path, as
// Hadoop's daemon scripts do in $HADOOP_PID_DIR, so an agent given
// --pid-file can follow a simulated daemon across restarts. The file is
// replaced whole (written beside it, then renamed), so a reader never
// sees half a PID. remove deletes it if it still holds this PID, as
// Hadoop's stop does; a killed process leaves it behind, stale, as a
// killed DataNode does.
func WritePIDFile(path string) (remove func(), err error) {
	pid := strconv.Itoa(os.Getpid()) + "\n"
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pid-*")
	if err != nil {
		return nil, fmt.Errorf("sim: pid file %s: %w", path, err)
	}
	_, err = tmp.WriteString(pid)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("sim: pid file %s: %w", path, err)
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && string(b) == pid {
			os.Remove(path)
		}
	}, nil
}
