// Command heureka is the one heureka binary. Each subcommand lives in its own
// file and adds itself to the command table (commands, in main.go) from that
// file's init function, so adding one is adding one file.
//
//	heureka server      the Eureka-compatible registry server (and its dashboard at /)
//	heureka agent       the HDFS node agent, beside one DataNode or NameNode
//	heureka sim         a simulated DataNode or NameNode, for tests and demos
//	heureka apps, instances, show, status, deregister, watch, events
//	                    operator commands against --registry or HEUREKA_REGISTRY
//	heureka alert       node failures and self-preservation to Alertmanager or a webhook
//	heureka topology    Hadoop's topology-script protocol, answered from the registry
//	heureka hadoop      hdfs-site HA properties and hosts files from the registry
//	heureka pick        DataNodes for a write, placed as HDFS places blocks (hdfs.Picker)
//	heureka gateway     a WebHDFS endpoint following the active NameNode (package webhdfs)
//	heureka demo        a local three-peer registry with a simulated HDFS cluster
//	heureka completion  a bash or zsh completion script
//	heureka version, help
//
// Flags, environment and signals are read here only; the packages it wires
// (registry, replication, internal/httpapi, agent, sim, client, webhdfs) take plain
// Config structs.
//
// # Concurrency
//
// Server, the program's Main type, composes its actors (the registry's
// eviction loop, replication, the HTTP server and a stopper) in a run group:
// the first actor to return stops the others. Open listens synchronously; Close is
// idempotent and safe to call from any goroutine.
//
// # What it does not do
//
// It reads no configuration file and does not daemonise (see
// docs/deployment.md for systemd units).
package main
