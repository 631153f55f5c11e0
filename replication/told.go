package replication

import (
	"maps"
	"strings"
	"sync/atomic"

	"github.com/heureka-project/heureka/urlcheck"
)

// Bounds on heureka.ToldPeersHeader. A value past them names nobody: the
// write goes to every peer, which is always correct.
const (
	// maxToldBytes is far above what any real list needs (a hundred
	// bytes a URL) and far below net/http's header limit.
	maxToldBytes = 4096
	// maxToldNames bounds the URLs read from one value; the rest are not
	// read, so the peers they name are sent the write.
	maxToldNames = 64
	// toldCacheSize bounds the distinct values remembered. An agent sends
	// a handful (its list, and its list less a peer that did not answer);
	// a fleet configured alike sends a handful more. When it fills, the
	// cache starts again, so values that each arrive once cost a parse
	// and no memory, and the agents' own are back at their next heartbeat.
	toldCacheSize = 256
	// maxSkippable is how many peers a mask can name; peers past it in
	// the list are sent every write.
	maxSkippable = 64
)

// told turns a heureka.ToldPeersHeader value into the set of this
// server's peers it names, as a bitmask over Replicator.peers (bit i is
// peers[i]), remembering the answer per value: the renewal path asks once
// per heartbeat, and the peer list is fixed for the replicator's life (a
// server's --peers changes by restarting it, which builds a new one).
//
// A name matches a peer only when urlcheck.PeerName spells both alike;
// anything else (another spelling of the same server, a URL this server
// does not list, a value that does not parse) names nobody, and the write
// is sent to that peer. Safe for concurrent use: lookups read an immutable
// map; a miss copies it with the new entry.
type told struct {
	names []string // PeerName of each peer, for the first maxSkippable
	cache atomic.Pointer[map[string]uint64]
}

func newTold(peerURLs []string) *told {
	t := &told{}
	for _, raw := range peerURLs[:min(len(peerURLs), maxSkippable)] {
		name := "" // matches nothing
		if u, err := urlcheck.Parse(raw); err == nil {
			name = urlcheck.PeerName(u)
		}
		t.names = append(t.names, name)
	}
	return t
}

// mask returns the peers value names; 0 for "".
func (t *told) mask(value string) uint64 {
	if value == "" || len(value) > maxToldBytes {
		return 0
	}
	if m := t.cache.Load(); m != nil {
		if mask, ok := (*m)[value]; ok {
			return mask
		}
	}
	mask := t.resolve(value)
	key := strings.Clone(value) // the cache outlives the request
	for {
		old := t.cache.Load()
		var next map[string]uint64
		if old == nil || len(*old) >= toldCacheSize {
			next = map[string]uint64{key: mask}
		} else {
			next = maps.Clone(*old)
			next[key] = mask
		}
		if t.cache.CompareAndSwap(old, &next) {
			return mask
		}
	}
}

// resolve parses value, without the cache.
func (t *told) resolve(value string) uint64 {
	var mask uint64
	n := 0
	for part := range strings.SplitSeq(value, ",") {
		if n++; n > maxToldNames {
			break
		}
		u, err := urlcheck.Parse(part)
		if err != nil || u.RawQuery != "" || u.Fragment != "" {
			continue
		}
		name := urlcheck.PeerName(u)
		for i, peer := range t.names {
			if peer == name {
				mask |= 1 << i
			}
		}
	}
	return mask
}
