//go:build !(linux || darwin || freebsd)

package hdfsrole

func statfs(string) (uint64, int64, int64, error) { return 0, 0, 0, ErrNoStatfs }
