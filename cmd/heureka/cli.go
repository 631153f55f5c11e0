package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/urlcheck"
)

// This file holds what the operator commands (apps, instances, show,
// status, deregister, watch, events, alert) share: the --registry flag,
// output formats, exit codes, and calls to the registry that the client
// package does not make.

// Exit codes of the operator commands.
const (
	exitOK       = 0 // done
	exitFailure  = 1 // the registry is unreachable, refused the call, …
	exitUsage    = 2 // a mistake on the command line
	exitNotFound = 3 // the application or instance does not exist
)

// exitCodesHelp is printed in every operator command's help.
const exitCodesHelp = `
Exit codes: 0 ok, 1 failure (e.g. the registry cannot be reached), 2 usage error,
3 not found (no such application or instance).
`

// defaultRegistryURL is where a registry listens by default.
const defaultRegistryURL = "http://127.0.0.1:8761/eureka"

// notFoundError says that an application or instance does not exist; the
// process exits with exitNotFound.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// ExitCode is the process exit code for this error.
func (e *notFoundError) ExitCode() int { return exitNotFound }

// exitProcess ends the process. main.go's run maps errors to the exit codes
// 0, 1 and 2 only, so withExitCodes ends the process itself for the others;
// tests replace exitProcess to observe the code.
var exitProcess = os.Exit

type runFunc = func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// withExitCodes reports an error that carries its own exit code (see
// notFoundError) and exits with that code; every other outcome is left to
// main.go's run.
func withExitCodes(fn runFunc) runFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		err := fn(ctx, args, stdout, stderr)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			if code := ec.ExitCode(); code != exitFailure && code != exitUsage {
				fmt.Fprintf(stderr, "heureka: %v\n", err)
				exitProcess(code)
			}
		}
		return err
	}
}

// cliOptions are the flags every operator command takes.
type cliOptions struct {
	registry string
	output   string
	timeout  time.Duration
	tls      clientTLS
}

// addFlags defines --registry and --timeout on fs, and -o/--output when the
// command lists something.
func (o *cliOptions) addFlags(fs *flag.FlagSet, listing bool) {
	def := os.Getenv("HEUREKA_REGISTRY")
	if def == "" {
		def = defaultRegistryURL
	}
	fs.StringVar(&o.registry, "registry", def, "registry base `URLs`, comma-separated, tried in order (default: $HEUREKA_REGISTRY, else "+defaultRegistryURL+")")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long one call to the registry may take")
	o.tls.addFlags(fs)
	if listing {
		o.output = "table"
		fs.StringVar(&o.output, "o", "table", "output `format`: table or json")
		fs.StringVar(&o.output, "output", "table", "output `format`: table or json (same as -o)")
	}
}

// validate checks the flags' values.
func (o *cliOptions) validate() error {
	if o.output != "" && o.output != "table" && o.output != "json" {
		return &usageError{fmt.Sprintf("-o %q: want table or json", o.output)}
	}
	if o.timeout <= 0 {
		return &usageError{fmt.Sprintf("--timeout %v: want a positive duration", o.timeout)}
	}
	return nil
}

func (o *cliOptions) json() bool { return o.output == "json" }

// parse parses an operator command's flags (see parseArgs), checks the
// shared ones and returns the positional arguments.
func (o *cliOptions) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	return pos, o.validate()
}

// parseNone parses an operator command's flags (see parseArgs) for a
// command that takes no positional arguments, and checks the shared ones.
func (o *cliOptions) parseNone(fs *flag.FlagSet, args []string) error {
	if err := noArgs(fs, args); err != nil {
		return err
	}
	return o.validate()
}

// parseOne parses fs and wants exactly one positional argument, naming
// what it is in the usage error.
func (o *cliOptions) parseOne(fs *flag.FlagSet, args []string, want string) (string, error) {
	pos, err := o.parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", &usageError{want}
	}
	return pos[0], nil
}

// commandFlags is the flag set of the command `heureka NAME`: every
// command defines its flags on one of these (newFlagSet adds the operator
// commands' usage), parses them with parseArgs, and so errs the same way.
func commandFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("heureka "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
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

// parseArgs parses flags that may come before, between or after the
// positional arguments (`heureka instances APP -o json`), and returns the
// positional ones. "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error()}
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

// newFlagSet returns a flag set whose usage prints synopsis, description,
// the flags and the exit codes.
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := commandFlags(name, stderr)
	setUsage(fs, synopsis, description)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), exitCodesHelp)
	}
	return fs
}

// setUsage makes -h print "Usage: heureka SYNOPSIS", the description and
// the flags.
func setUsage(fs *flag.FlagSet, synopsis, description string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: heureka %s\n\n%s\n\nFlags:\n", synopsis, strings.TrimSpace(description))
		fs.PrintDefaults()
	}
}

// logFlags defines --log-format and --log-level on fs, as every long-running
// command has them; the function it returns builds that logger once fs is
// parsed.
func logFlags(fs *flag.FlagSet, stderr io.Writer) func() (*slog.Logger, error) {
	format := fs.String("log-format", "text", "log format: text or json (logs go to stderr)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	return func() (*slog.Logger, error) { return newLogger(stderr, *format, *level) }
}

// registryConn is the operator commands' connection to one registry
// cluster: a client.Client over the --registry URLs, and those URLs with
// any password redacted, for messages.
type registryConn struct {
	urls   []string // Eureka base URLs, e.g. http://h:8761/eureka
	shown  []string // the same with any password redacted
	client *client.Client
}

// tokenEnv names the environment variable with a bearer token for servers
// that require credentials; a user:password in a --registry URL is sent as
// basic auth instead.
const tokenEnv = "HEUREKA_TOKEN"

// clientConfig checks the --registry URLs and turns the flags into a
// client configuration.
func (o *cliOptions) clientConfig() (client.Config, error) {
	cfg := client.DefaultConfig()
	for _, u := range splitURLs(o.registry) {
		if _, err := urlcheck.Parse(u); err != nil {
			return cfg, &usageError{fmt.Sprintf("--registry %q is not a URL like %s", u, defaultRegistryURL)}
		}
		cfg.URLs = append(cfg.URLs, u)
	}
	if len(cfg.URLs) == 0 {
		return cfg, &usageError{"--registry is empty: give the registry's URL, e.g. " + defaultRegistryURL}
	}
	cfg.ConnectTimeout = min(o.timeout, 5*time.Second)
	cfg.ReadTimeout = o.timeout
	cfg.Rounds = 1 // an operator would rather hear at once
	cfg.Logger = slog.New(slog.DiscardHandler)
	o.tls.apply(&cfg)
	return cfg, nil
}

// splitURLs splits a comma-separated --registry value.
func splitURLs(s string) []string {
	var out []string
	for u := range strings.SplitSeq(s, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// connect builds the client for the flags. Nothing is dialled yet.
func (o *cliOptions) connect() (*registryConn, error) {
	cfg, err := o.clientConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg)
	if err != nil {
		return nil, &usageError{"--registry: " + err.Error()}
	}
	rc := &registryConn{urls: cfg.URLs, client: c}
	for _, u := range cfg.URLs {
		p, _ := urlcheck.Parse(u)
		rc.shown = append(rc.shown, p.Redacted())
	}
	return rc, nil
}

func (rc *registryConn) close() { _ = rc.client.Close() }

// session connects for a one-shot command and bounds ctx by --timeout;
// done releases both.
func (o *cliOptions) session(ctx context.Context) (*registryConn, context.Context, func(), error) {
	rc, err := o.connect()
	if err != nil {
		return nil, ctx, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	return rc, ctx, func() { cancel(); rc.close() }, nil
}

// withInstance opens a session, finds the instance with this ID and calls fn
// with it, all within the session's timeout.
func (o *cliOptions) withInstance(ctx context.Context, id string, fn func(context.Context, *registryConn, *heureka.Instance) error) error {
	rc, ctx, done, err := o.session(ctx)
	if err != nil {
		return err
	}
	defer done()
	in, err := rc.instanceByID(ctx, id)
	if err != nil {
		return err
	}
	return fn(ctx, rc, in)
}

// unreachableError is a registry that gave no answer.
func (rc *registryConn) unreachableError(cause error) error {
	return fmt.Errorf("cannot reach the registry at %s: %v; is `heureka server` running? set --registry or HEUREKA_REGISTRY",
		strings.Join(rc.shown, ", "), cause)
}

// explain turns a client error into one an operator can act on; notFound,
// when set, is the message for an answer of 404.
func (rc *registryConn) explain(err error, what string, notFound ...string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(err, client.ErrUnavailable):
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status >= 500 {
			return fmt.Errorf("%s: the registry failed: %v", what, err)
		}
		cause := err
		var oe *net.OpError
		if errors.As(err, &oe) {
			cause = oe
		}
		return rc.unreachableError(cause)
	case errors.Is(err, client.ErrNotRegistered):
		if len(notFound) > 0 {
			return &notFoundError{notFound[0]}
		}
		return &notFoundError{fmt.Sprintf("%s: not registered (%v)", what, err)}
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("%s: %w%s", what, err, authHint(ce.Status))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// authHint says how to give credentials after a 401 or 403.
func authHint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "; the registry wants credentials: set " + tokenEnv + " or put user:password in the --registry URL"
	case http.StatusForbidden:
		return "; these credentials may not do this (operator commands need the operator role)"
	}
	return ""
}

// instanceByID finds an instance by its ID alone.
func (rc *registryConn) instanceByID(ctx context.Context, id string) (*heureka.Instance, error) {
	if id == "" {
		return nil, &usageError{"the instance ID is empty"}
	}
	in, err := rc.client.InstanceByID(ctx, id)
	return in, rc.explain(err, fmt.Sprintf("instance %q", id),
		fmt.Sprintf("instance %q is not registered; list instances with `heureka instances APP` (applications: `heureka apps`)", id))
}

// application reads one application.
func (rc *registryConn) application(ctx context.Context, app string) (*heureka.Application, error) {
	app = strings.ToUpper(app)
	a, err := rc.client.Application(ctx, app)
	return a, rc.explain(err, fmt.Sprintf("application %q", app),
		fmt.Sprintf("application %q has no instances; list applications with `heureka apps`", app))
}

// withLiveRenewals puts the live renewal times into ins, or says on w
// that the times shown are the registration's.
func (rc *registryConn) withLiveRenewals(ctx context.Context, app string, ins []*heureka.Instance, w io.Writer) {
	live, err := rc.client.Renewals(ctx, app)
	if err != nil {
		fmt.Fprintln(w, "heureka: note: renewal times are as of the last registration (this server does not show live ones to this client)")
		return
	}
	for _, in := range ins {
		if ms, ok := live[in.ID]; ok && ms > in.Lease.LastRenewalTimestamp {
			in.Lease.LastRenewalTimestamp = ms
		}
	}
}

// maxHostsFlag bounds --host: a batch as large as a topology script's
// many times over, and the most one lookup request carries.
const maxHostsFlag = client.MaxLookupHosts

// hostsFlag splits --host; nil when it was not given.
func hostsFlag(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var hosts []string
	for h := range strings.SplitSeq(v, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	switch {
	case len(hosts) == 0:
		return nil, &usageError{fmt.Sprintf("--host %q: want host names or IP addresses, comma-separated", v)}
	case len(hosts) > maxHostsFlag:
		return nil, &usageError{fmt.Sprintf("--host: %d hosts; at most %d at once", len(hosts), maxHostsFlag)}
	}
	return hosts, nil
}

// maxLiveReads is how many instances instancesOn refreshes with one
// single-instance read each; beyond that one read of the application's
// renewals is cheaper.
const maxLiveReads = 32

// instancesOn returns app's instances on hosts (host name in any case, or
// IP address), by client.OnHosts: a heureka server answers from its host
// index, which costs the answer; a server without it (plain Eureka) is
// read whole. Renewal times are live when the server shows them. None
// found is a not-found error.
func (rc *registryConn) instancesOn(ctx context.Context, app string, hosts []string, stderr io.Writer) ([]*heureka.Instance, error) {
	app = strings.ToUpper(app)
	found, scanned, err := rc.client.OnHosts(ctx, hosts, app)
	switch {
	case err != nil && scanned:
		return nil, rc.explain(err, fmt.Sprintf("application %q", app),
			fmt.Sprintf("application %q has no instances; list applications with `heureka apps`", app))
	case err != nil:
		return nil, rc.explain(err, fmt.Sprintf("look up %d hosts in %q", len(hosts), app))
	case scanned || len(found) > maxLiveReads:
		rc.withLiveRenewals(ctx, app, found, stderr)
	default:
		for i, in := range found {
			if live, err := rc.client.Instance(ctx, in.App, in.ID); err == nil {
				found[i] = live
			}
		}
	}
	if len(found) == 0 {
		return nil, &notFoundError{fmt.Sprintf("application %q has no instances on %s; list them all with `heureka instances %s`",
			app, strings.Join(hosts, ", "), strings.ToLower(app))}
	}
	return found, nil
}

// listing reads the whole registry with the position it was read at
// (heureka servers only).
func (rc *registryConn) listing(ctx context.Context) (*heureka.Applications, client.Position, error) {
	apps, pos, err := rc.client.Listing(ctx)
	if errors.Is(err, client.ErrNotHeureka) {
		return nil, pos, err
	}
	return apps, pos, rc.explain(err, "read the registry")
}

// newTable returns a tab-aligned table writer on w.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// ago renders how long ago t was, coarsely: 4s, 3m, 2h, 5d.
func ago(now time.Time, ms int64) string {
	if ms <= 0 {
		return "-"
	}
	d := now.Sub(time.UnixMilli(ms))
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// dash renders an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cleanCell keeps a table cell on one line and free of terminal escapes:
// instance data is untrusted.
func cleanCell(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// flagError is a Config's validation error in the command line's terms: a
// *heureka.ConfigError with its field named by the flag that sets it
// (flags maps fields to flags), as a usage error.
func flagError(err error, flags map[string]string) error {
	ce, ok := errors.AsType[*heureka.ConfigError](err)
	if !ok {
		return &usageError{err.Error()}
	}
	named := *ce
	if f, ok := flags[ce.Field]; ok {
		named.Field = f
	}
	return &usageError{named.Error()}
}
