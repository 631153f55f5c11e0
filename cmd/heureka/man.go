package main

import (
	"context"
	"fmt"
	"io"
)

const manHelp = `
Writes heureka.1 and one heureka-COMMAND.1 per command into DIR, made from
each command's own help and flags, so that they cannot drift from the
binary (subcommands such as 'status set' are in their command's page).
It prints the names of the files it wrote.`

func runMan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("man", "man --dir DIR [--gzip]", manHelp, exitsTool, stderr)
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
