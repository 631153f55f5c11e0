// Package urlcheck holds the one check every URL heureka is given goes
// through (absolute, http or https, with a host) and the two ways URLs are
// shown: without credentials (Public) and as a server's root (Root). It has
// no state.
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

// Public is u without any user:password, for what others get to see
// (alerts, logs); u is returned as it is if it does not parse.
func Public(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.User = nil
	return p.String()
}

// Root returns a server's root URL for its Eureka base URL: the base
// without a trailing slash and /eureka, /eureka/v1 or /eureka/v2.
func Root(base string) string {
	b := strings.TrimRight(base, "/")
	for _, suffix := range []string{"/eureka/v2", "/eureka/v1", "/eureka"} {
		if s, ok := strings.CutSuffix(b, suffix); ok {
			return s
		}
	}
	return b
}
