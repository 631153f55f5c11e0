package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
)

// command is one subcommand. run gets the arguments after the subcommand's
// name; it returns a *usageError for bad arguments (exit 2), flag.ErrHelp
// after printing its own help (exit 0) and any other error for a failure
// (exit 1).
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the subcommand table. Each subcommand's file adds itself from
// its init function.
var commands = map[string]*command{}

func addCommand(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("heureka: duplicate subcommand " + c.name)
	}
	commands[c.name] = c
}

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process's exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			if c, ok := commands[rest[0]]; ok {
				return exitCode(c.run(ctx, []string{"-h"}, stdout, stdout), stderr)
			}
			fmt.Fprintf(stderr, "heureka: unknown command %q\n\n", rest[0])
			printUsage(stderr)
			return 2
		}
		printUsage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "heureka: unknown command %q\n\n", name)
		printUsage(stderr)
		return 2
	}
	return exitCode(c.run(ctx, rest, stdout, stderr), stderr)
}

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "heureka: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "heureka: %v\n", err)
		return 1
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "heureka is a service registry that speaks Netflix Eureka's protocol.\n\n")
	fmt.Fprintf(w, "Usage:\n\n\theureka <command> [flags]\n\nCommands:\n\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "\t%-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\t%-10s %s\n", "help", "print this help, or a command's flags with 'help <command>'")
	fmt.Fprintf(w, "\nRun 'heureka <command> -h' for a command's flags.\n")
}
