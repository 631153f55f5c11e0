// Package webhdfs is heureka's WebHDFS gateway: an http.Handler that
// serves Hadoop's WebHDFS REST API (/webhdfs/v1/PATH?op=...) for one HDFS
// cluster and forwards each request to the cluster's active NameNode as
// the registry knows it, so that any WebHDFS client (curl, HdfsCLI, Node's
// webhdfs, Hue, Hadoop's webhdfs:// FileSystem) survives NameNode failover
// and dead DataNodes without changing.
//
// What it does to each request:
//
//   - Checks it: a known op sent with its HTTP method, the parameters the
//     op cannot do without, a path without "." or ".." components, bounded
//     path, query and body. Anything else is answered by the gateway with
//     WebHDFS's JSON RemoteException and never reaches a NameNode.
//   - Sends it to the active NameNode (hdfs.ResolveNameNodes over
//     Config.NameNodes), at its http_port. A StandbyException (403) or a
//     refused connection, the two answers that prove the NameNode did
//     nothing, is retried once, on the next NameNode the registry names
//     active, waiting up to FailoverWait for the registry to name one.
//     Nothing else is retried, so a write never reaches two NameNodes. A
//     cluster with no NameNode registered at all (once Config.Synced says
//     the registry was read) is answered 503 at once, saying so; Server
//     also logs a warning of it when it starts.
//   - On CREATE and APPEND adds Hadoop's excludedatanodes parameter,
//     listing as "ip:xferPort" the DataNodes the registry says are not UP,
//     draining, over FullnessThreshold, or that failed the gateway's probe
//     recently (Penalties); on OPEN and GETFILECHECKSUM, those not UP or
//     penalised. The caller's own entries are kept.
//   - Checks the 307 the NameNode answers (or, with noredirect=true, the
//     Location of its JSON answer): a Location on a DataNode that
//     is unusable by the same rules, or that does not accept a TCP
//     connection within ProbeTimeout, is asked again with that node
//     excluded (MaxRechoose times). The redirect is then passed to the
//     client unchanged: the client sends file data straight to the
//     DataNode, as WebHDFS intends, and never through the gateway.
//   - Passes delegation tokens, user.name and doas through untouched
//     (they are query parameters), bounds each request by RequestTimeout
//     and answers every failure as a RemoteException.
//
// Server is the gateway program (`heureka gateway` is its flags): a
// Gateway over a client.Cache that watches the cluster's NameNodes and
// DataNodes, served over HTTP or HTTPS beside /metrics, /healthz and
// /readyz (ready once the registry has been read and names an active
// NameNode). NewServer has no side effects; Open listens synchronously and
// starts its actors (the HTTP server, the credentials watcher, the
// stopper) in one internal/rungroup; Close shuts the HTTP server down
// gracefully within ShutdownTimeout, waits for every actor and stops the
// cache. Its timeouts are ServerConfig's, each with its reason.
//
// Metrics (Config.Registerer): heureka_gateway_requests_total{op,outcome},
// heureka_gateway_request_duration_seconds{op},
// heureka_gateway_failovers_total, heureka_gateway_standby_retries_total,
// heureka_gateway_datanodes_excluded_total,
// heureka_gateway_redirects_rejected_total{reason},
// heureka_gateway_redirects_unknown_total and
// heureka_gateway_active_namenode_known.
//
// # Concurrency
//
// A Gateway is safe for concurrent use; it holds no lock while a request
// is in flight. Notify may be called from any goroutine (a client.Cache's
// OnChange listener) and never blocks. A Server's Ready, Addr, Done and
// Close may be called from any goroutine once Open has returned; Open
// may be called once.
//
// # What it does not do
//
// It does not proxy file data (clients must reach the DataNodes, as they
// must without it), authenticate to Hadoop (Kerberos SPNEGO or tokens are
// the client's, passed through), or cache anything. It is not a security
// boundary unless Config.Auth is set, and even then it grants no HDFS
// permission: the NameNode decides those.
package webhdfs
