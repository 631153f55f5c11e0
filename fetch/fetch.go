package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/urlcheck"
)

// Get sends GET url with the given Accept header (none if "") and returns
// the body of a 200 answer. It reads at most limit bytes: a longer body is
// an ETOOLARGE error, not a truncated answer. Errors are *heureka.Error:
// EUNAVAILABLE when the daemon cannot be reached, does not answer before
// ctx ends, or answers with another status (its first line of body
// quoted); ETOOLARGE past limit. Each names the URL without credentials.
func Get(ctx context.Context, c *http.Client, url, accept string, limit int64) ([]byte, error) {
	shown := urlcheck.Public(url)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, heureka.Errorf(heureka.EINVALID, "GET %s: %v", shown, err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, heureka.Errorf(heureka.EUNAVAILABLE, "GET %s: %s", shown, reason(ctx, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return nil, heureka.Errorf(heureka.EUNAVAILABLE, "GET %s: reading the answer: %s", shown, reason(ctx, err))
	case int64(len(body)) > limit:
		return nil, heureka.Errorf(heureka.ETOOLARGE, "GET %s: the answer is larger than %d bytes", shown, limit)
	case resp.StatusCode != http.StatusOK:
		return nil, heureka.Errorf(heureka.EUNAVAILABLE, "GET %s: HTTP %s: %s", shown, resp.Status, Excerpt(body))
	}
	return body, nil
}

// reason says why a request failed, naming a deadline plainly.
func reason(ctx context.Context, err error) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "no answer before the deadline (a slow or paused daemon)"
	}
	return err.Error()
}

// Excerpt returns the start of b for an error message: its first line, at
// most 120 bytes of valid UTF-8, quoted.
func Excerpt(b []byte) string {
	s := string(b)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	const max = 120
	cut := len(s) > max
	if cut {
		s = s[:max]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	s = strings.ToValidUTF8(s, "?")
	if cut {
		return fmt.Sprintf("%q…", s)
	}
	return fmt.Sprintf("%q", s)
}
