// Package client is heureka's Go discovery client. It speaks the Netflix
// Eureka REST protocol, so it works against heureka and against any Eureka
// server, and uses heureka's watch stream where the server has one.
//
// It has two parts:
//
//   - Client makes the calls an agent or a Go service needs: Register,
//     Renew, Cancel, SetStatus, ClearStatus, UpdateMetadata, and the reads
//     Apps and Instance. It fails over across a cluster's registry URLs.
//     RenewTold and RenewOthers are the heartbeats of a caller that sends
//     each beat to every URL of its list itself, as heureka's agent does:
//     they name the peers told in heureka.ToldPeersHeader, so that a
//     heureka server replicates the beat only to the peers it does not
//     name.
//   - Cache keeps a local copy of the registry, or of some applications,
//     for readers that must never wait: Snapshot, Instances, Instance and
//     Apps read an immutable view, and OnChange reports what changed.
//
// and, for heureka servers and the tools that watch them:
//
//   - Follow follows /v1/watch or /v1/events, calling a handler for each
//     event in order; it resumes a dropped stream from the last event
//     handled, and on a resync (or a restarted server, told by its node)
//     re-reads the registry through the caller's Sync. Listing, Status,
//     InstanceByID, Application and Renewals are the reads operators'
//     tools make; ByHost (instances by host name or IP) and PickDataNodes
//     (a server-side DataNode choice) are heureka's reads that cost the
//     answer, not the registry, and OnHosts is ByHost with a full read of
//     a plain Eureka server as its fallback. WatchView is what a
//     /v1/watch follower has seen, naming each change ADDED or MODIFIED
//     against it. WriteCacheFile and ReadCacheFile are the Cache's file
//     format. Follow runs in the caller's goroutine until its ctx ends.
//
// # Creating and closing
//
// New and NewCache check their configuration and do nothing else:
//
//	cfg := client.DefaultConfig()
//	cfg.URLs = []string{"http://10.0.0.1:8761/eureka", "http://10.0.0.2:8761/eureka"}
//	c, err := client.New(cfg)
//	if err != nil { ... }
//	defer c.Close()
//
//	ccfg := client.DefaultCacheConfig()
//	ccfg.Apps, ccfg.CacheFile = []string{"hdfs-datanode.prod"}, "/var/lib/app/registry.json"
//	cache, err := client.NewCache(c, ccfg)
//	if err != nil { ... }
//	if err := cache.Start(ctx); err != nil { ... }
//	defer cache.Close(context.Background())
//	<-cache.Synced() // optional: wait until every cluster has been read
//	ups := cache.Instances("hdfs-datanode.prod", client.Up())
//
// A Client owns only idle connections; Close releases them and the Client
// stays usable. A Cache owns goroutines: Start launches one loop per
// registry cluster, one goroutine that calls change listeners and, with a
// CacheFile, one that writes the file. Close(ctx) stops them all, waits for
// them (bounded by ctx) and is idempotent; the last snapshot stays readable
// afterwards. Run(ctx) is Start, then Close once ctx is done, for run
// groups. A Cache cannot be restarted; build a new one.
//
// # Errors
//
// Every error from a Client call is an *Error saying which call, which URL
// and what the server said ({"error":"…"} bodies are read), and wraps a
// cause that errors.Is can test:
//
//   - ErrNotRegistered: the registry answered 404. An agent's Renew gets it
//     when its lease has expired or the registry restarted; it should
//     Register again.
//   - ErrUnavailable: no registry of the cluster answered. The chain also
//     holds the last attempt's error (a *net.OpError, say).
//   - ErrRejected: a 4xx other than 404, or arguments refused before
//     sending. Retrying the same call will not help.
//   - context.Canceled or context.DeadlineExceeded: ctx ended.
//
// The sentinels are *heureka.Error values, so heureka.ErrorCode maps them
// to ENOTFOUND, EUNAVAILABLE and EINVALID.
//
// # TLS and credentials
//
// https registry URLs are verified against the system's roots, or against
// Config.CAFile (a PEM bundle), on top of Config.TLS when given;
// Config.CertFile and KeyFile are a client certificate for registries that
// ask for one (mutual TLS). A URL's user:password is sent as HTTP basic
// auth, as Eureka clients send theirs, and is redacted from every error and
// log; Config.BearerToken is sent as "Authorization: Bearer" to URLs
// without one. A registry that refuses the credentials answers 401 or 403:
// the error wraps ErrRejected and carries the server's message, which says
// what is missing.
//
// # Failover and timeouts
//
// Each call tries the cluster's URLs in order, starting with the one that
// answered last; a connection error, a timeout or a 5xx moves on to the
// next URL, a 4xx ends the call. After a full round the call pauses
// (Backoff doubling to MaxBackoff, jittered) and goes round again, at most
// Rounds times. ConnectTimeout bounds dialling, ReadTimeout the wait for
// response headers; ctx bounds everything.
//
// Config.Clusters routes applications to separate registry clusters by
// name pattern (a registry per role); calls and caches use the cluster
// that holds the application, and a Cache reads every cluster it needs.
//
// # How the cache stays fresh
//
// Each cluster starts with a full fetch (GET {base}/apps/). Then:
//
//   - Watching, when the server sent X-Heureka-Version: the cache follows
//     GET /v1/watch on that server, a Server-Sent Events stream of changes
//     with consecutive sequence numbers, and applies them as they arrive.
//     A dropped stream is resumed from the last change applied
//     (Last-Event-ID), so nothing is missed; a gap in the sequence or a
//     resync event leads to a full fetch and a new watch. See watch.go
//     for the protocol.
//   - Polling, against any Eureka server: every PollInterval, GET
//     {base}/apps/delta; ADDED and MODIFIED entries replace by application
//     and ID, DELETED entries remove; then the reconcile hash code of the
//     result is compared with the delta's apps__hashcode, and any mismatch
//     (or a refused delta) leads to a full fetch. A server that has
//     X-Heureka-Version but no watch endpoint (404), or takes no more
//     watchers (503), is polled, and the watch is tried again every
//     WatchRetryInterval.
//
// A cache limited to some applications (CacheConfig.Apps) never reads the
// whole registry. Its full fetch is GET {base}/apps/{APP} for each wanted
// application, preceded on a heureka server by GET /v1/status for the
// version to watch from; its watch asks for those applications only
// (/v1/watch?app=...). Eureka has no per-application delta (the delta's
// hash code covers every application), so when polling it reads each
// wanted application again every PollInterval: cheap when they are small
// beside the registry.
//
// A full fetch that finds an empty registry does not replace a non-empty
// view unless AllowEmpty is set: a registry that has just restarted knows
// nothing yet. While no registry answers, the cache keeps serving its last
// view and retries (PollInterval doubling to RetryMax); it catches up when
// one returns. With a CacheFile the view is written atomically after
// changes (at most once per CacheFileInterval, and at Close) and loaded by
// Start, so reads work before any registry answers. Status reports each
// cluster's mode, server, last success and last error.
//
// # Concurrency
//
// Client, Cache and Snapshot are safe for concurrent use (a WatchView is
// not: Follow calls it from one goroutine). Readers load the
// current Snapshot with one atomic read: they never block, never allocate,
// and never see half an update; updates build a new Snapshot and swap it
// in. Nothing reachable from a Snapshot is ever modified, so readers must
// not modify what they get either (Select and Instance.Clone copy).
//
// Change listeners (OnChange) run on one goroutine, one notification at a
// time, in publication order, holding no lock that readers or updates
// need. A slow listener delays only itself: notifications queue up to
// MaxPendingChanges, and beyond that the queue is merged into one
// notification spanning it (the old snapshot of the first, the new of the
// last, and their Diff), so the listener skips intermediate states but
// never misses the net effect. Listeners must not call Close.
//
// # What it does not do
//
// It does not renew leases on its own (the agent's loop calls Renew), read
// XML (it asks for JSON), follow remote regions, or shuffle instances
// (Snapshot order is by ID; pick at random yourself). Instances from watch
// events carry no lease timestamps, and Diff ignores lease timestamps. A
// heureka server that restarts between two watch connections starts a new
// sequence; the client notices only if the sequence does not continue its
// own.
package client
