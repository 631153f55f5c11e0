// Package urlcheck holds the one check every URL heureka is given goes
// through: absolute, http or https, with a host. It has no state.
package urlcheck

import (
	"errors"
	"net/url"
	"strings"
)

// ErrNotHTTP is wrapped by Parse's errors.
var ErrNotHTTP = errors.New("not an absolute http:// or https:// URL with a host")

// Parse parses s (surrounding spaces trimmed) and checks that it is an
// absolute http or https URL with a host. Errors never repeat a password
// given in s.
func Parse(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, ErrNotHTTP
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrNotHTTP
	}
	return u, nil
}
