// Package urlcheck holds the one check every URL heureka is given goes
// through (absolute, http or https, with a host) and the ways URLs are
// shown: without credentials (Public), as a server's root (Root), and as a
// registry peer is named between a client and the servers (PeerName). It
// has no state.
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

// PeerName is how a registry server's base URL u is spelt in
// heureka.ToldPeersHeader, by the client that writes it and by the server
// that compares it with its peer list: scheme and host in lower case, the
// path as given without trailing slashes, no credentials, query or
// fragment. It is deliberately literal: two spellings of one server (a name
// and its address, an explicit default port) stay different, so a server
// that cannot tell replicates.
func PeerName(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/")
}
