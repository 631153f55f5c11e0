package heureka

import (
	"regexp"
)

// MaxPatternBytes bounds a name pattern: a pattern is configuration, not
// data, and one of this size already names anything sensible.
const MaxPatternBytes = 256

// CompilePattern compiles p, a regular expression (RE2 syntax) over whole
// application names or instance IDs, as the credentials file's agent
// scopes and the client's per-cluster registry URLs take them: anchored at
// both ends and case-insensitive, since application names are. An empty
// pattern, one over MaxPatternBytes and one that does not compile are
// EINVALID errors that quote it.
func CompilePattern(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, Errorf(EINVALID, "empty pattern")
	}
	if len(p) > MaxPatternBytes {
		return nil, Errorf(EINVALID, "pattern of %d bytes; the limit is %d", len(p), MaxPatternBytes)
	}
	re, err := regexp.Compile(`(?i)^(?:` + p + `)$`)
	if err != nil {
		return nil, Errorf(EINVALID, "pattern %q: %v", p, err)
	}
	return re, nil
}
