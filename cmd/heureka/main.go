package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/ctl"
)

// command is one subcommand. run gets the arguments after the subcommand's
// name; it returns flag.ErrHelp after printing its own help (exit 0), a
// *usageError for bad arguments (exit 2), a *ctl.NotFoundError for what
// does not exist (exit 3) and any other error for a failure (exit 1).
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the subcommand table; `heureka help` lists it by name.
var commands = map[string]*command{}

// The table is filled here, not where commands is declared, because some
// commands (help, completion, man) read it.
func init() {
	for _, c := range []*command{
		{name: "agent", summary: "run the HDFS node agent beside a DataNode or NameNode", run: runAgent},
		{name: "alert", summary: "forward node failures and self-preservation to Alertmanager or a webhook", run: runAlert},
		{name: "apps", summary: "list the registered applications and their instance counts", run: runApps},
		{name: "auth", summary: "make secrets for the server's credentials file, and check the file", run: runAuth},
		{name: "completion", summary: "print a shell completion script (bash or zsh)", run: runCompletion},
		{name: "demo", summary: "run a local registry cluster with a simulated HDFS cluster, to try heureka", run: runDemo},
		{name: "deregister", summary: "remove an instance from the registry", run: runDeregister},
		{name: "events", summary: "print the registry's event stream: registrations, status changes, expiries", run: runEvents},
		{name: "gateway", summary: "serve WebHDFS for a cluster, forwarding to the active NameNode and around dead DataNodes", run: runGateway},
		{name: "hadoop", summary: "print Hadoop configuration from the registry (hdfs-site, hosts)", run: runHadoop},
		{name: "instances", summary: "list an application's instances: status, rack, disk, blocks, version", run: runInstances},
		{name: "man", summary: "write the manual pages (heureka.1, heureka-COMMAND.1) into a directory", run: runMan},
		{name: "pick", summary: "choose DataNodes for a write the way HDFS places blocks, from the registry", run: runPick},
		{name: "server", summary: "run the Eureka-compatible registry server", run: runServer},
		{name: "show", summary: "show everything the registry knows about one instance", run: runShow},
		{name: "sim", summary: "run a SIMULATED DataNode or NameNode, or a simulated cluster of another system, for tests and demos", run: runSim},
		{name: "status", summary: "set or clear an instance's status override (e.g. OUT_OF_SERVICE to drain it)", run: runStatus},
		{name: "topology", summary: "answer Hadoop's topology-script protocol from the registry", run: runTopology},
		{name: "version", summary: "print heureka's version", run: runVersion},
		{name: "watch", summary: "print registry changes as they happen, one line each", run: runWatch},
	} {
		commands[c.name] = c
	}
}

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
	case "--version", "-version":
		name = "version"
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

// exitCode says err once on stderr and returns the process's exit code
// for it.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "heureka: %v\n", err)
	if _, ok := errors.AsType[*usageError](err); ok {
		return 2
	}
	if _, ok := errors.AsType[*ctl.NotFoundError](err); ok {
		return 3
	}
	return 1
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
	fmt.Fprintf(w, "\nRun 'heureka <command> -h' for a command's flags. 'heureka --version' is 'heureka version'.\n")
}

// untilSignal returns ctx, ended also by SIGINT or SIGTERM, for a command
// that runs until then. Calling stop lets a second signal end the process
// the default way.
func untilSignal(ctx context.Context) (_ context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
}

// closeOnSignal waits until ctx, from untilSignal (stop is its cancel),
// ends or srv stops by itself, then closes srv within its shutdown timeout
// and a margin: the end of `heureka server` and `heureka gateway`.
func closeOnSignal(ctx context.Context, stop context.CancelFunc, srv interface {
	Done() <-chan struct{}
	Close(context.Context) error
}, shutdown time.Duration, logger *slog.Logger, name string) error {
	select {
	case <-ctx.Done():
		logger.Info(name+" stopping", "reason", context.Cause(ctx))
	case <-srv.Done():
	}
	stop() // a second signal now kills the process the default way
	cctx, cancel := context.WithTimeout(context.Background(), shutdown+5*time.Second)
	defer cancel()
	if err := srv.Close(cctx); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	logger.Info(name + " stopped")
	return nil
}
