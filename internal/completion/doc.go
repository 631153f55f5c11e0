// Package completion writes heureka's shell completion scripts, for bash
// and zsh, from a list of its subcommands and their flags. The scripts
// complete subcommands, flags, instance statuses, and application names
// and instance IDs, which they read from the registry when Tab is pressed
// by running `heureka completion --list apps|ids`.
//
// # Concurrency
//
// It is pure: functions of their arguments, safe for concurrent use.
//
// # What it does not do
//
// It does not read the command table or the registry (cmd/heureka does).
package completion
