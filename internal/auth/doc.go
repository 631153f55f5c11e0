// Package auth is heureka's credentials and authorisation: who a caller is
// (HTTP basic auth, a bearer token, or a verified TLS client certificate),
// what each role may do, and the TLS key pairs that are reloaded without a
// restart.
//
// # The credentials file
//
// One JSON document, read by Store.Load and reloaded when it changes:
//
//	{
//	  "reads": "open",
//	  "users": [
//	    {"name": "dn-agent", "roles": ["agent"], "apps": ["HDFS-DATANODE\\..*"],
//	     "secrets": ["$2a$10$…"]},
//	    {"name": "ops", "roles": ["operator"], "secrets": ["$2y$10$…"]},
//	    {"name": "peer", "roles": ["peer"], "secrets": ["sha256:9f86…"], "certificate": true},
//	    {"name": "grafana", "roles": ["reader"], "secrets": ["sha256:…"]}
//	  ]
//	}
//
// "reads" must be given: "open" serves registry reads to anyone,
// "authenticated" to any valid user. A user has one or more roles:
//
//   - agent: register, renew, cancel, set or clear the status of, and update
//     the metadata of instances of the applications matched by "apps" (and,
//     when "instances" is given, only those instance IDs). Patterns are
//     regular expressions matched against the whole name, ignoring case,
//     like the client's Clusters: "HDFS-DATANODE\\..*" lets a DataNode agent
//     touch HDFS-DATANODE.PROD but not HDFS-NAMENODE.PROD.
//   - operator: every instance write on any application (status overrides,
//     deregistering anything, metadata). Each such write is an operator
//     action: the HTTP layer logs one audit line for it.
//   - peer: replication, i.e. POST /peerreplication/batch,
//     /v1/replication/*, and single writes marked
//     x-netflix-discovery-replication: true (which skip the rules that
//     apply to clients, so nobody else may send them).
//   - reader: reads only. Every user may read; the role exists for users
//     that may do nothing else.
//
// # Secrets
//
// Secrets are stored hashed, in one of two forms; several may be listed
// so that a secret can be rotated without a gap:
//
//   - bcrypt ("$2a$…", "$2b$…", "$2y$…", cost 4 to 15), for passwords that
//     people choose; `heureka auth hash` and `htpasswd -nB` make them. A
//     bcrypt check costs tens of milliseconds by design, so a successful
//     check is remembered, keyed by an HMAC (with a per-load random key) of
//     the user and the secret: heartbeats every 10 s cost a hash, not a
//     bcrypt. The memory is dropped with each reload; at most a few checks
//     run at once, so bad passwords cannot take every CPU.
//   - "sha256:" and 64 hex digits, the SHA-256 of a high-entropy token such
//     as `heureka auth token` makes (256 random bits). Such a token cannot
//     be guessed, so it needs no salt and no slow hash; being unsalted, it
//     can be looked up, which is what lets a bare "Authorization: Bearer"
//     token name its user. Never use this form for a password a person
//     chose.
//
// Basic auth ("user:password", as Eureka clients send the userinfo of their
// service URL) is checked against every secret of the named user; a bearer
// token against the sha256 secrets of all users. A user with
// "certificate": true is also authenticated by a TLS client certificate
// that the server verified against its client CA and whose subject common
// name is the user's name; an Authorization header, when present, wins.
//
// # Reloading
//
// Store.Load reads the file again and swaps the new table in atomically;
// a file that does not parse or validate leaves the current table in place
// and is reported. Store.Watch polls the file's size, modification time and
// identity, and loads it when they change; `heureka server` also loads it
// on SIGHUP.
//
// # Concurrency
//
// A Store, a KeyPair and a Principal are safe for concurrent use. Readers
// load the current table with one atomic read and never wait for a reload.
//
// # What it does not do
//
// It does not know HTTP routes (internal/httpapi says which action a route
// is), rate-limit, or trust forwarded-for headers. Unknown user names fail
// fast, so they can be told from known ones by timing; user names are not
// secrets.
package auth
