// Package dashboard is heureka's web page: one HTML page with its script,
// style sheet and icon, embedded in the binary (embed.FS), with no build
// step. internal/httpapi mounts it at "/" and its assets at "/ui/NAME".
//
// The page reads only heureka's public endpoints, through relative URLs (so
// it also works behind a proxy that mounts a server under a path): GET
// v1/status every few seconds for the peers, the start-up sync and the
// self-preservation state with its reason; GET eureka/apps (JSON) once for
// the applications and instances; and GET v1/events, the event stream,
// through an EventSource, to update the instance table and the event feed
// live. A resync event, or a stream that cannot be resumed, makes it read
// the registry again and follow the stream from that listing's version.
//
// Instance data is untrusted: the script builds the page with
// createElement and textContent only, never with innerHTML, and every
// response carries a Content-Security-Policy that allows no inline script,
// no inline style and no other origin.
//
// # Concurrency
//
// The assets are read and hashed once, at package initialisation; the
// handlers only read them and are safe for concurrent use.
//
// # What it does not do
//
// It changes nothing: there are no buttons that write to the registry (use
// the heureka CLI), no authentication (put a proxy in front), and no
// history beyond the events the server still holds in its change log.
package dashboard
