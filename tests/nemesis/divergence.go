package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// recordDivergence writes, to name.txt in the run's directory, what every
// peer serves where the peers differ or miss a live instance (each copy's
// status, override, metadata rev, lastDirtyTimestamp, lastUpdatedTimestamp
// and last renewal, and which live client it belongs to), then each peer's
// /v1/status (replication peers, queues, self-preservation) and
// anti-entropy digest, so that the cause can be read off. With only set, it
// writes that instance's copies whether or not they differ. It prints the
// first lines of the difference.
func (w *world) recordDivergence(ctx context.Context, name, what, only string) {
	views := make([]view, len(w.peers))
	errs := make([]error, len(w.peers))
	for i, p := range w.peers {
		views[i], errs[i] = w.fetchView(ctx, "nemesis", p)
	}
	live := w.liveCopy()
	lines := divergence(w.peers, views, errs, live, only)

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, at %.1fs of the run\n\n", name, what, time.Since(w.h.begin).Seconds())
	for _, l := range lines {
		fmt.Fprintln(&b, l)
	}
	for _, p := range w.peers {
		for _, path := range []string{"/v1/status", "/v1/replication/digest"} {
			body, err := w.getRaw(ctx, p, path)
			if err != nil {
				fmt.Fprintf(&b, "\n%s %s: %v\n", p.name(), path, err)
				continue
			}
			fmt.Fprintf(&b, "\n%s %s:\n%s\n", p.name(), path, body)
		}
	}
	file := filepath.Join(w.cfg.out, name+".txt")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "nemesis: writing %s: %v\n", file, err)
	}
	fmt.Printf("nemesis %6.1fs %s: %d instances differ (%s)\n", time.Since(w.h.begin).Seconds(), name, len(lines), file)
	for i, l := range lines {
		if i == 10 {
			fmt.Printf("  … %d more in %s\n", len(lines)-i, file)
			break
		}
		fmt.Printf("  %s\n", l)
	}
}

// divergence is one line per instance that the peers do not serve alike
// (or that a peer lacks while its client is live), or for only alone when
// it is set: "id (client): p1=… p2=absent …".
func divergence(peers []*peer, views []view, errs []error, live map[string]liveInst, only string) []string {
	ids := map[string]bool{}
	for _, v := range views {
		for id := range v {
			ids[id] = true
		}
	}
	for id := range live {
		ids[id] = true
	}
	sorted := slices.Sorted(func(yield func(string) bool) {
		for id := range ids {
			if !yield(id) {
				return
			}
		}
	})
	var out []string
	for _, id := range sorted {
		if only != "" && id != only {
			continue
		}
		li, isLive := live[id]
		same, first := true, ""
		var cells []string
		for i, p := range peers {
			if errs[i] != nil {
				cells = append(cells, p.name()+"=unreadable ("+errs[i].Error()+")")
				same = false
				continue
			}
			in, ok := views[i][id]
			s := "absent"
			if ok {
				s = fmt.Sprintf("%s override=%s rev=%s dirty=%s updated=%s renewed=%s action=%s",
					in.Status, in.Overridden, in.Rev, in.Dirty, in.Updated, in.Renewed, in.Action)
			}
			seen := "absent"
			if ok {
				seen = in.seen()
			}
			if i == 0 {
				first = seen
			} else if seen != first {
				same = false
			}
			if isLive && !ok {
				same = false
			}
			cells = append(cells, p.name()+"="+s)
		}
		if same && only == "" {
			continue
		}
		who := "not live"
		if isLive {
			who = fmt.Sprintf("live %s, heartbeats to %v, last acknowledged %v ago", li.shape, li.direct(netState{}),
				time.Since(li.lastOK).Round(10*time.Millisecond))
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", id, who, strings.Join(cells, " | ")))
	}
	return out
}

// getRaw reads one of heureka's own resources from p, e.g. /v1/status.
func (w *world) getRaw(ctx context.Context, p *peer, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	u := strings.TrimSuffix(p.clientURL(), "/eureka") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := w.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", u, resp.Status, b)
	}
	return b, nil
}
