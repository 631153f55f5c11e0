package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/heureka-project/heureka/internal/auth"
)

// stdin is where `heureka auth hash` reads; tests replace it.
var stdin io.Reader = os.Stdin

const authUsage = `Usage:

	heureka auth hash [--cost N] [--token] < secret
	heureka auth token
	heureka auth check FILE

hash   reads one line (a password) from standard input and prints its bcrypt
       hash for the "secrets" of a user in the credentials file; with --token,
       the sha256: form of a token instead.
token  prints a new random token (256 bits) and its sha256: form: give the
       token to the client (Authorization: Bearer TOKEN, or as a basic-auth
       password), the sha256: line to the credentials file.
check  parses and checks a credentials file as the server would.

The credentials file (heureka server --auth-file FILE):

	{"reads": "open",
	 "users": [
	  {"name": "dn-agent", "roles": ["agent"], "apps": ["HDFS-DATANODE\\..*"], "secrets": ["sha256:…"]},
	  {"name": "ops", "roles": ["operator"], "secrets": ["$2a$10$…"]},
	  {"name": "peer", "roles": ["peer"], "secrets": ["sha256:…"], "certificate": true}]}

Roles: agent (writes to its apps' instances), operator (any write; audited),
peer (replication), reader (reads). "reads": "open" or "authenticated".

` + exitsTool + "\n"

func runAuth(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, authUsage)
		return &usageError{"auth: missing subcommand: hash, token or check"}
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, authUsage)
		return flag.ErrHelp
	case "hash":
		return authHash(rest, stdout, stderr)
	case "token":
		fs := newFlagSet("auth token", "auth token", "Prints a new random token (256 bits) and its sha256: form.", exitsTool, stderr)
		if err := noArgs(fs, rest); err != nil {
			return err
		}
		tok := auth.NewToken()
		fmt.Fprintf(stdout, "token:  %s\nsecret: %s\n", tok, auth.HashToken(tok))
		return nil
	case "check":
		return authCheck(rest, stdout, stderr)
	}
	return &usageError{fmt.Sprintf("auth: unknown subcommand %q: want hash, token or check", sub)}
}

// authCheck is `heureka auth check FILE`.
func authCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("auth check", "auth check FILE", "Parses and checks a credentials file as the server would.", exitsTool, stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"auth check: want one FILE"}
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	f, err := auth.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "%s: ok, %d users, reads %s\n", pos[0], len(f.Users), f.Reads)
	return nil
}

func authHash(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("auth hash", "auth hash [--cost N] [--token] < secret",
		"Reads one line (a password) from standard input and prints its bcrypt hash, or with --token the sha256: form of a token.", exitsTool, stderr)
	cost := fs.Int("cost", 10, "bcrypt cost (4 to 15); each step doubles the time of a check")
	token := fs.Bool("token", false, "hash a high-entropy token (sha256: form) instead of a password")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("auth hash: unexpected argument %q: the secret is read from standard input", pos[0])}
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	secret := strings.TrimRight(line, "\r\n")
	if secret == "" {
		return &usageError{"auth hash: no secret on standard input"}
	}
	if *token {
		fmt.Fprintln(stdout, auth.HashToken(secret))
		return nil
	}
	h, err := auth.HashPassword(secret, *cost)
	if err != nil {
		return &usageError{"auth hash: " + err.Error()}
	}
	fmt.Fprintln(stdout, h)
	return nil
}
