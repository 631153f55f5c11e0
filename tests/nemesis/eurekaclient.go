package main

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// eurekaClient makes a plain Eureka client's calls (register, heartbeat,
// metadata, cancel) the way Netflix's Java client (eureka-client, its
// registration transport) chooses a server for them; see doc.go for the
// facts and where they are in Netflix's source. In short:
//
//   - its servers are its service URLs in an order of its own (Netflix
//     shuffles them with a seed taken from the client's address, so each
//     client keeps one order and clients spread over the servers);
//   - it sticks to the server that answered last;
//   - a call that fails there (no answer, or a status the call does not
//     accept) is tried again at once, on the candidates in order, up to
//     three attempts in all; a candidate that fails is quarantined, and the
//     quarantine is forgotten once it holds 66% of the servers (with three
//     peers, one server);
//   - every session (20 minutes in Netflix's client, ±50%; here a
//     thirtieth of that, as the 1 s renewals are a thirtieth of Netflix's
//     30 s) it forgets the sticky server and the quarantine and starts
//     from the head of its list again.
//
// Each attempt is bounded by attemptTimeout. A eurekaClient belongs to
// one plain agent's goroutine.
type eurekaClient struct {
	w       *world
	proc    string
	servers []*peer
	sticky  *peer
	quar    map[*peer]bool
	attempt time.Duration // bounds one attempt: attemptTimeout

	session    time.Duration
	sessionEnd time.Time
}

const (
	// attemptTimeout bounds one attempt on one server. Netflix's are 5 s to
	// connect and 8 s to read against a 30 s renewal interval; a thirtieth
	// of that would be under 300 ms, too tight on a shared two-core
	// machine, so an attempt gets the renewal interval.
	attemptTimeout = time.Second
	// attempts is RetryableEurekaHttpClient.DEFAULT_NUMBER_OF_RETRIES.
	attempts = 3
	// quarantineRefresh is retryableClientQuarantineRefreshPercentage.
	quarantineRefresh = 0.66
	// eurekaSession is sessionedClientReconnectIntervalSeconds (20 min)
	// scaled as the renewal interval is (30 s → 1 s).
	eurekaSession = 40 * time.Second
)

func newEurekaClient(w *world, proc string, servers []*peer) *eurekaClient {
	return &eurekaClient{w: w, proc: proc, servers: servers, quar: map[*peer]bool{}, attempt: attemptTimeout, session: eurekaSession}
}

// accepted is Netflix's legacy status evaluator: which answers end a call
// rather than send it to another server.
func accepted(opName string, code int) bool {
	switch {
	case code == 0:
		return false // no answer
	case code/100 == 2 || code == http.StatusFound:
		return true
	case code == http.StatusNotFound && (opName == "register" || opName == "renew"):
		return true
	case opName == "cancel":
		return true // "cancel is best effort"
	}
	return false
}

// candidates is getHostCandidates: the servers not quarantined, or every
// server once the quarantine has grown past its share.
func (c *eurekaClient) candidates() []*peer {
	threshold := int(float64(len(c.servers)) * quarantineRefresh)
	if len(c.quar) == 0 {
		return c.servers
	}
	if len(c.quar) >= threshold {
		clear(c.quar)
		return c.servers
	}
	var out []*peer
	for _, p := range c.servers {
		if !c.quar[p] {
			out = append(out, p)
		}
	}
	return out
}

// do makes one call, as RetryableEurekaHttpClient.execute (inside
// SessionedEurekaHttpClient) does. It returns the accepted answer's status
// and the peer that gave it, or the last attempt's error.
func (c *eurekaClient) do(ctx context.Context, opName, id, method, path string, body []byte) (int, *peer, error) {
	now := time.Now()
	if now.After(c.sessionEnd) {
		c.sticky = nil
		clear(c.quar)
		c.sessionEnd = now.Add(c.session/2 + time.Duration(c.w.rng.intN(int(c.session/time.Millisecond)))*time.Millisecond)
	}
	var cands []*peer
	next := 0
	var lastErr error
	for range attempts {
		p, fromList := c.sticky, false
		if p == nil {
			if cands == nil {
				cands = c.candidates()
			}
			if next >= len(cands) {
				break
			}
			p, fromList = cands[next], true
			next++
		}
		code, _, err := c.w.callWithin(ctx, c.attempt, c.proc, opName, id, p, method, path, body)
		if accepted(opName, code) {
			c.sticky = p
			return code, p, nil
		}
		if ctx.Err() != nil {
			return code, nil, ctx.Err()
		}
		lastErr = err
		if c.sticky == p {
			c.sticky = nil
		}
		if fromList {
			c.quar[p] = true
		}
	}
	if lastErr == nil {
		lastErr = errors.New("no server left to try")
	}
	return 0, nil, lastErr
}
