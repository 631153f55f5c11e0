// Package dashboard is heureka's web page and the compact summary it reads.
// The page (HTML, a script, a style sheet and an icon) is embedded in the
// binary (embed.FS), with no build step; internal/httpapi mounts it at "/",
// its assets at "/ui/NAME" and ServeSummary at SummaryPath
// (GET /v1/dashboard/summary).
//
// The summary is what the page draws first, in columns per application
// rather than Eureka records: instance IDs, hosts, statuses, racks,
// fullness and notes, rows by rack then ID, with status counts, per-rack
// counts and problem rows (see Summary and docs/design.md). HDFS facts come
// from package hdfs; every other role's (an application ROLE.CLUSTER of a
// role package roles knows) from package roles: the summary names every
// role, its system and the states that lead, and an application of one
// carries its role, its cluster and each member's role state as the note.
// The page draws a card per such cluster (a system's roles together, as
// HBase's masters and RegionServers), its members by role and rack, the
// one whose state leads marked. The summary is encoded once per registry
// snapshot, and each application's part is reused while the snapshot holds
// the same immutable blocks of it, so a change re-encodes only the
// applications it touched.
//
// The page reads only heureka's public endpoints, through relative URLs (so
// it also works behind a proxy that mounts a server under a path): the
// summary once; GET v1/events, the event stream, through an EventSource,
// from the summary's version, applying each event to its row and its
// rack-map square, batched per animation frame; GET v1/status every few
// seconds for the peers, the start-up sync, self-preservation and the DNS
// server's zone, address and queries (when it serves DNS); and
// GET eureka/apps/APP/ID for one instance's details when it is clicked. A
// resync event, or a stream that cannot be resumed, makes it read the
// summary again and follow the stream from that version.
//
// Instance data is untrusted: the script builds the page with
// createElement and textContent only, never with innerHTML, and every
// response carries a Content-Security-Policy that allows no inline script,
// no inline style and no other origin.
//
// # Concurrency
//
// The assets are read and hashed once, at package initialisation; the
// handlers only read them and are safe for concurrent use. ServeSummary's
// cache is one per process, guarded by a mutex; its entries are keyed by
// the snapshot and each application's blocks, which the registry never
// modifies (each new snapshot replaces the cached one).
//
// # What it does not do
//
// It changes nothing: there are no buttons that write to the registry (use
// the heureka CLI), no authentication of its own (internal/httpapi asks
// the read permission for the page, its assets and the summary, as for
// every read), and no history beyond the events the server still holds
// in its change log. The summary has no paging: it is the whole registry
// in compact form (about 100 bytes an instance), because the rack map
// draws every DataNode.
package dashboard
