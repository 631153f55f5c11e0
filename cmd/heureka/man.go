package main

import (
	"context"
	"fmt"
	"io"
)

const manHelp = `Usage: heureka man --dir DIR [--gzip]

Writes heureka.1 and one heureka-COMMAND.1 per command into DIR, made from
each command's own help and flags, so that they cannot drift from the
binary (subcommands such as 'status set' are in their command's page).
It prints the names of the files it wrote.

Flags:
`

func runMan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := commandFlags("man", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), manHelp)
		fs.PrintDefaults()
	}
	dir := fs.String("dir", "", "`directory` to write the pages into (required; created if missing)")
	gz := fs.Bool("gzip", false, "write NAME.1.gz, compressed as Debian installs man pages")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return &usageError{"man: --dir is required"}
	}
	names, err := writeManPages(ctx, *dir, *gz)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return nil
}
