// Package accept reads what an HTTP client says it accepts. It is the one
// owner of that rule for every handler of the server: the Eureka REST
// surface and the dashboard both ask it whether to gzip an answer.
package accept

import (
	"net/http"
	"strings"
)

// Gzip reports whether r's Accept-Encoding allows a gzipped answer: it
// lists gzip (or its alias x-gzip), or the wildcard *, with a quality
// above zero ("gzip;q=0" refuses it, RFC 9110 section 12.5.3). An explicit
// gzip entry wins over the wildcard. It allocates nothing.
func Gzip(r *http.Request) bool {
	star, gzip := false, false
	starSeen, gzipSeen := false, false
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.TrimSpace(coding)
			ok := qualityAboveZero(params)
			switch {
			case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
				gzip, gzipSeen = gzip || ok, true
			case coding == "*":
				star, starSeen = star || ok, true
			}
		}
	}
	if gzipSeen {
		return gzip
	}
	return starSeen && star
}

// qualityAboveZero reads the parameters after a coding ("q=0.5", " q=0 ")
// and reports whether its quality is above zero; no q means 1.
func qualityAboveZero(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		// A qvalue is 0, 0.d{0,3}, 1 or 1.0{0,3}: it is zero exactly when
		// every digit is 0.
		for _, c := range strings.TrimSpace(value) {
			if c >= '1' && c <= '9' {
				return true
			}
		}
		return false
	}
	return true
}
