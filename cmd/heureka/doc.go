// Command heureka is the one heureka binary. Each subcommand lives in its own
// file and adds itself to the command table (commands, in main.go) from that
// file's init function, so adding one is adding one file.
//
//	heureka server [flags]   run the Eureka-compatible registry server
//	heureka version          print the version
//	heureka help [command]   print usage
//
// Flags, environment and signals are read here only; the packages it wires
// (registry, internal/httpapi) take plain Config structs.
//
// # Concurrency
//
// Server, the program's Main type, composes its actors (the registry's
// eviction loop, the HTTP server and a stopper) in a run group: the first
// actor to return stops the others. Open listens synchronously; Close is
// idempotent and safe to call from any goroutine.
//
// # What it does not do
//
// It reads no configuration file and no environment variables yet, does not
// daemonise, and does not manage TLS; put a proxy in front for that.
package main
