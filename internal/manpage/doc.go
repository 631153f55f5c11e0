// Package manpage makes heureka's manual pages (roff, man(7)) from its
// commands' own -h output, so that they cannot drift from the binary.
// That text has a known shape: "Usage:" lines, a description, "Flags:"
// followed by flag.PrintDefaults's pairs of lines ("  -name arg" and
// "    \thelp"), and optionally "Exit codes: ..." after them. Parse takes
// it apart; Command renders a command's page, and Header and Escape serve
// pages written by hand (the index).
//
// # Concurrency
//
// It is pure: functions of their arguments, safe for concurrent use.
//
// # What it does not do
//
// It does not run commands or write files (cmd/heureka does).
package manpage
