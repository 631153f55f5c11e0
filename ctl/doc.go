// Package ctl is what heureka's operator commands do: read a registry
// cluster and show what it holds, change an instance's status, follow its
// streams, and answer Hadoop's questions from it. Each command is a
// function over a Conn (a client of the registry and the words to explain
// its errors with) and its options, writing to an Output: Apps,
// Instances, Show, SetStatus, ClearStatus, Deregister, Watch, Events,
// Pick, HDFSSite, Hosts, Topology and List. cmd/heureka turns flags into
// a Config and the options, and calls them.
//
// The tables and JSON shapes are the commands' (View, AppSummary,
// PickResult, WatchLine). Options and Config are checked by Validate,
// which returns a *heureka.ConfigError naming the field, for the CLI to
// name its flag. Something asked about that does not exist (an
// application, an instance, enough DataNodes) is a *NotFoundError, which
// the CLI exits 3 for; every other failure says what failed and what to
// check (Conn.Explain).
//
// # Concurrency
//
// A Conn may be used by one command at a time; its client is safe for
// concurrent use. One-shot commands are bounded by Config.Timeout; Watch
// and Events run until their context ends.
//
// # What it does not do
//
// It reads no flags, environment or signals (cmd/heureka does), keeps no
// state between commands beyond Topology's cache file, and renders no
// Hadoop file itself (package hdfs does).
package ctl
