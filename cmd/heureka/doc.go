// Command heureka is the one heureka binary. The command table in
// main.go's init lists every subcommand by name with its run function, in
// one place: the programs each in a file of their own (runServer in
// server.go, runAgent in agent.go, ...), the operator commands in
// operator.go, pick.go, hadoop.go and topology.go.
//
//	heureka server      the Eureka-compatible registry server (package server)
//	heureka agent       the agent beside one daemon: HDFS, YARN, HBase, Elasticsearch,
//	                    ZooKeeper or Kafka (agent, agent/<system>role)
//	heureka sim         a simulated DataNode or NameNode, for tests and demos (sim)
//	heureka apps, instances, show, status, deregister, watch, events
//	                    operator commands against the registry (ctl)
//	heureka alert       node failures and self-preservation to Alertmanager or a webhook (alert)
//	heureka auth        secrets for the server's credentials file, and a check of the file (internal/auth)
//	heureka topology    Hadoop's topology-script protocol, answered from the registry (ctl)
//	heureka hadoop      hdfs-site HA properties and hosts files from the registry (ctl)
//	heureka pick        DataNodes for a write, placed as HDFS places blocks (ctl)
//	heureka gateway     a WebHDFS endpoint following the active NameNode (webhdfs.Server)
//	heureka demo        a local three-peer registry with a simulated HDFS cluster (demo)
//	heureka completion  a bash or zsh completion script (internal/completion)
//	heureka man         the manual pages, from each command's help (internal/manpage)
//	heureka version, help (also heureka --version)
//
// Each run function defines its flags on a flag set of commandFlags (every
// command that reads the registry takes the same --registry, --timeout and
// TLS flags, connFlags), turns them into a package's Config or options, and
// calls the package: New/Open, a run until SIGINT or SIGTERM, and Close for
// the programs (server, gateway, demo, sim, agent, alert), or one call of
// package ctl for the operator commands. A Config's *heureka.ConfigError is
// reported under the flag that sets its field (flagError). Flags, the
// environment, signals and exit codes are read and set here only.
//
// Exit codes: 0 ok (or stopped by a signal), 1 failure, 2 usage error
// (*usageError, or a Config's error), 3 not found (*ctl.NotFoundError);
// each command's help ends with the ones that apply to it.
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
