// Command heureka is the one heureka binary. Each subcommand lives in a
// file of its own as a run function (runServer in server.go, ...); the
// command table in main.go's init lists every one of them by name, in
// one place.
//
//	heureka server      the Eureka-compatible registry server (package server)
//	heureka agent       the agent beside one DataNode or NameNode (agent, agent/hdfsrole)
//	heureka sim         a simulated DataNode or NameNode, for tests and demos (sim)
//	heureka apps, instances, show, status, deregister, watch, events
//	                    operator commands against --registry or HEUREKA_REGISTRY (client)
//	heureka alert       node failures and self-preservation to Alertmanager or a webhook (alert)
//	heureka topology    Hadoop's topology-script protocol, answered from the registry (hdfs.AnswerRacks)
//	heureka hadoop      hdfs-site HA properties and hosts files from the registry (hdfs)
//	heureka pick        DataNodes for a write, placed as HDFS places blocks (hdfs.Picker)
//	heureka gateway     a WebHDFS endpoint following the active NameNode (webhdfs.Server)
//	heureka demo        a local three-peer registry with a simulated HDFS cluster (demo)
//	heureka completion  a bash or zsh completion script (internal/completion)
//	heureka man         the manual pages, from each command's help (internal/manpage)
//	heureka version, help
//
// Each run function turns its flags into a package's Config (checking
// them, and naming a flag in each usage error, exit 2), calls the
// package's New/Open (or Run), waits for SIGINT or SIGTERM, and calls
// Close. Flags, the environment, signals and exit codes are read and set
// here only; the packages take plain Config structs, and the programs that
// run until a signal (server, gateway, demo, sim, agent, alert) are those
// packages' types, so tests run the same wiring on port 0.
//
// # Concurrency
//
// One command runs per process. A run function returns once everything it
// started has stopped.
//
// # What it does not do
//
// It reads no configuration file and does not daemonise (see
// docs/deployment.md for systemd units).
package main
