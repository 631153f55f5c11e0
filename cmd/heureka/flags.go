package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"

	"github.com/heureka-project/heureka"
)

// usageError is a mistake on the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// The exit codes each kind of command ends its help with.
const (
	// exitsOperator: the commands that read or change the registry.
	exitsOperator = `Exit codes: 0 ok, 1 failure (e.g. the registry cannot be reached), 2 usage error,
3 not found (no such application or instance).`
	// exitsProgram: the commands that run until a signal.
	exitsProgram = `Exit codes: 0 stopped by SIGINT or SIGTERM, 1 failure (e.g. a port is busy),
2 usage error.`
	// exitsTool: the commands that do one thing and end.
	exitsTool = `Exit codes: 0 ok, 1 failure, 2 usage error.`
)

// commandFlags is the flag set of the command `heureka NAME`. Every
// command defines its flags on one of these, gives it its help with
// setUsage, and parses it with parseArgs, so that all err and help alike.
func commandFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("heureka "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// newFlagSet is commandFlags with its help set (see setUsage).
func newFlagSet(name, synopsis, description, exits string, stderr io.Writer) *flag.FlagSet {
	fs := commandFlags(name, stderr)
	setUsage(fs, synopsis, description, exits)
	return fs
}

// setUsage makes -h print "Usage: heureka SYNOPSIS", the description, the
// flags (printFlags) and the exit codes.
func setUsage(fs *flag.FlagSet, synopsis, description, exits string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: heureka %s\n\n%s\n", synopsis, strings.TrimSpace(description))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			printFlags(w, fs)
		}
		fmt.Fprintf(w, "\n%s\n", exits)
	}
}

// printFlags lists fs's flags as the usage lines write them: --name for a
// long one, -n for a letter, each with its argument's name, its help on
// the next line, and its default when it has one.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, help := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if arg != "" {
			line += " " + arg
		}
		line += "\n    \t" + strings.ReplaceAll(help, "\n", "\n    \t")
		switch def := f.DefValue; {
		case def == "" || def == "0" || def == "false" || def == "0s" || def == "[]":
		case isString(f):
			line += fmt.Sprintf(" (default %q)", def)
		default:
			line += " (default " + def + ")"
		}
		fmt.Fprintln(w, line)
	})
}

func isString(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, s := g.Get().(string)
	return s
}

// parseArgs parses flags that may come before, between or after the
// positional arguments (`heureka instances APP -o json`), and returns the
// positional ones. "--" ends the flags. -h prints the help and returns
// flag.ErrHelp; a mistake returns a *usageError that says it once and
// points at -h, without the whole help.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	help, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard) // the flag package's own copy of the error
	defer func() { fs.Usage = help; fs.SetOutput(out) }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				help()
				return nil, err
			}
			return nil, &usageError{fmt.Sprintf("%v; see '%s -h'", err, fs.Name())}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// noArgs parses flags for a command that takes no positional arguments.
func noArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("%s: unexpected argument %q", strings.TrimPrefix(fs.Name(), "heureka "), pos[0])}
	}
	return nil
}

// logFlags defines --log-format and --log-level on fs, as every long-running
// command has them; the function it returns builds that logger once fs is
// parsed.
func logFlags(fs *flag.FlagSet, stderr io.Writer) func() (*slog.Logger, error) {
	format := fs.String("log-format", "text", "log format: text or json (logs go to stderr)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	return func() (*slog.Logger, error) { return newLogger(stderr, *format, *level) }
}

// flagError is a Config's validation error as a usage error, its fields
// called by the flags (or environment variables) that set them: fields
// maps a command's Config fields to its flags, each command's in one
// table (heureka.ConfigNamed). Any other error comes back as it is.
func flagError(err error, fields map[string]string) error {
	if ce, ok := errors.AsType[*heureka.ConfigError](heureka.ConfigNamed(err, fields)); ok {
		return &usageError{ce.Error()}
	}
	return err
}

// withFields returns one table of the fields given, for a command whose
// Config holds another (or takes two), later tables winning.
func withFields(tables ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, t := range tables {
		maps.Copy(out, t)
	}
	return out
}

// clientFields maps the fields of a client.Config that a command sets
// from its connection flags (connFlags, clientTLS) to those flags, each
// under prefix ("Registry." where the client's config is a part of the
// command's).
func clientFields(prefix string) map[string]string {
	return map[string]string{
		prefix + "URLs": "--registry", prefix + "CAFile": "--ca-file", prefix + "CertFile": "--cert-file",
		prefix + "KeyFile": "--key-file", prefix + "BearerToken": "$" + tokenEnv,
	}
}

// commaList splits a comma-separated flag value, dropping empty items.
func commaList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// appsFlag collects repeated or comma-separated --app flags, upper-cased
// as Eureka names applications.
type appsFlag []string

func (a *appsFlag) String() string { return strings.Join(*a, ",") }

func (a *appsFlag) Set(v string) error {
	for _, s := range commaList(v) {
		*a = append(*a, strings.ToUpper(s))
	}
	return nil
}
