package hdfsrole

import (
	"fmt"
	"net/url"
	"strings"

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

// ParseDataDirs reads DataNode storage directories the way
// dfs.datanode.data.dir lists them: each value comma-separated, each
// directory optionally prefixed with a storage type ("[SSD]") and given as
// a path or a file:// URI. Empty entries are dropped.
func ParseDataDirs(values ...string) []string {
	var out []string
	for _, v := range values {
		for d := range strings.SplitSeq(v, ",") {
			d = strings.TrimSpace(d)
			if strings.HasPrefix(d, "[") {
				if i := strings.IndexByte(d, ']'); i > 0 {
					d = d[i+1:]
				}
			}
			if u, err := url.Parse(d); err == nil && u.Scheme == "file" {
				d = u.Path
			}
			if d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}
