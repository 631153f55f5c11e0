package reach

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/urlcheck"
)

// Client returns an HTTP client for a daemon the agent runs beside: no
// proxy (the daemon is local), a dial bounded at 5 s (the probe's context
// bounds it sooner), and one idle connection kept, so that a probe a
// second does not open a connection a second.
func Client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
	}}
}

// Read runs read, which makes one or more HTTP requests with the context
// it is given, and returns its report, with its error in the agent's
// terms:
//   - nil when read succeeded;
//   - an error wrapping agent.ErrRefused when a connection was refused:
//     the daemon is not there (any connection it had was closed);
//   - an error wrapping agent.ErrNoAnswer when a connection was made (or
//     an idle one reused) and ctx ended before read had its answers: the
//     daemon accepts but does not answer, as a paused one does;
//   - else read's error unchanged.
func Read[T any](ctx context.Context, read func(ctx context.Context) (T, error)) (T, error) {
	var connected, refused atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
		ConnectDone: func(_, _ string, err error) {
			if errors.Is(err, syscall.ECONNREFUSED) {
				refused.Store(true)
			}
		},
	})
	v, err := read(ctx)
	switch {
	case err == nil:
		return v, nil
	case refused.Load():
		// Even after an idle connection was reused: the daemon closed it
		// and its port refused the new one.
		return v, fmt.Errorf("%w: %w", agent.ErrRefused, err)
	case connected.Load() && ctx.Err() != nil:
		return v, fmt.Errorf("%w: %w", agent.ErrNoAnswer, err)
	}
	return v, err
}

// Health is what a probe of a daemon whose read ended with err says: a
// daemon of another cluster is unhealthy with the cause foreign gives,
// another error is the probe's error, and an answer is the report's role
// state (state), unhealthy with its cause when health says so. health
// is called only for an answer.
func Health(err error, state func() string, health func() (bool, string)) (agent.Health, error) {
	if cause, ok := foreign(err); ok {
		return agent.Health{Unhealthy: cause}, nil
	}
	if err != nil {
		return agent.Health{}, err
	}
	h := agent.Health{State: state()}
	if ok, cause := health(); !ok {
		h.Unhealthy = cause
	}
	return h, nil
}

// foreign reports whether err is a knowledge package's refusal of a daemon
// of another cluster (an ECONFLICT heureka.Error: another cluster id,
// cluster UUID or ensemble), and if so the cause a role registers: its
// message, which names both clusters.
func foreign(err error) (cause string, ok bool) {
	if heureka.ErrorCode(err) != heureka.ECONFLICT {
		return "", false
	}
	return "another cluster's daemon: " + err.Error(), true
}

// Base checks a daemon's web address as a role's Config gives it
// ("http://127.0.0.1:8088", credentials allowed) and returns it without
// query, fragment or trailing slash, for the knowledge packages' readers,
// with its port (0 when the URL names none).
func Base(raw string) (string, int, error) {
	u, err := urlcheck.Parse(raw)
	if err != nil {
		return "", 0, err
	}
	u.RawQuery, u.Fragment = "", ""
	port, _ := strconv.Atoi(u.Port())
	return strings.TrimRight(u.String(), "/"), port, nil
}
