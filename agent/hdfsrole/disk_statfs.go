//go:build linux || darwin || freebsd

package hdfsrole

import (
	"errors"
	"os"
	"syscall"
)

// statfs returns the device of dir's filesystem, its size and its used
// bytes.
func statfs(dir string) (dev uint64, total, used int64, err error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, errors.New("no device number")
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, 0, 0, err
	}
	bsize := int64(fs.Bsize)
	total = int64(fs.Blocks) * bsize
	used = (int64(fs.Blocks) - int64(fs.Bfree)) * bsize
	return uint64(st.Dev), total, used, nil
}
