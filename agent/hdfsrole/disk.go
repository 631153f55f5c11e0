package hdfsrole

import (
	"fmt"

	"github.com/heureka-project/heureka"
)

// DiskUsage returns the total size and the used space, in bytes, of the
// filesystems holding dirs, each filesystem counted once however many of
// dirs it holds. Used space is the filesystem's (total minus free), which
// includes files outside HDFS: an upper bound of what the DataNode's
// DfsUsed would say, and the right figure for "how full is this disk".
func DiskUsage(dirs []string) (total, used int64, err error) {
	if len(dirs) == 0 {
		return 0, 0, heureka.Errorf(heureka.EINVALID, "hdfsrole: no data directories")
	}
	seen := map[uint64]bool{}
	for _, dir := range dirs {
		dev, t, u, err := statfs(dir)
		if err != nil {
			return 0, 0, fmt.Errorf("data directory %s: %w", dir, err)
		}
		if seen[dev] {
			continue
		}
		seen[dev] = true
		total += t
		used += u
	}
	return total, used, nil
}
