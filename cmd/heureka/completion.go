package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/heureka-project/heureka/ctl"
	"github.com/heureka-project/heureka/internal/completion"
)

const completionHelp = `Usage: heureka completion bash|zsh

Prints a completion script for subcommands, their flags, application names
and instance IDs (read from the registry in $HEUREKA_REGISTRY when you press
Tab).

  bash:  source <(heureka completion bash)          # in ~/.bashrc
  zsh:   source <(heureka completion zsh)           # in ~/.zshrc, after compinit
         or: heureka completion zsh > "${fpath[1]}/_heureka"

` + exitsTool + "\n"

func runCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stderr, completionHelp)
		return nil
	}
	if len(args) == 2 && args[0] == "--list" {
		return completionList(ctx, args[1], stdout)
	}
	if len(args) != 1 {
		return &usageError{"completion: want a shell: `heureka completion bash` or `heureka completion zsh`"}
	}
	spec := completionSpec(ctx)
	switch args[0] {
	case "bash":
		_, err := io.WriteString(stdout, completion.Bash(spec))
		return err
	case "zsh":
		_, err := io.WriteString(stdout, completion.Zsh(spec))
		return err
	}
	return &usageError{fmt.Sprintf("completion: unknown shell %q; want bash or zsh", args[0])}
}

// completionList prints application names or instance IDs, one a line, for
// the scripts' dynamic completion. It is quiet and quick on failure:
// someone is waiting on Tab.
func completionList(ctx context.Context, what string, stdout io.Writer) error {
	if what != "apps" && what != "ids" {
		return &usageError{"completion --list: want apps or ids"}
	}
	c := connFlags{timeout: 2 * time.Second}
	conn, err := c.open()
	if err != nil {
		return nil
	}
	defer conn.Close()
	_ = ctl.List(ctx, conn, stdout, what)
	return nil
}

var flagLine = regexp.MustCompile(`(?m)^  --?([A-Za-z0-9][A-Za-z0-9-]*)`)

// completionSpec lists every subcommand with its flags, read from the
// command's own help (run with -h, with a context that is already
// cancelled, so that nothing can start).
func completionSpec(ctx context.Context) []completion.Spec {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var specs []completion.Spec
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		c := commands[name]
		s := completion.Spec{Name: name, Summary: c.summary}
		if name != "completion" {
			var out bytes.Buffer
			_ = c.run(cctx, []string{"-h"}, &out, &out)
			for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
				f := "--" + m[1]
				if len(m[1]) == 1 {
					f = "-" + m[1]
				}
				if !slices.Contains(s.Flags, f) {
					s.Flags = append(s.Flags, f)
				}
			}
		}
		specs = append(specs, s)
	}
	specs = append(specs, completion.Spec{Name: "help", Summary: "print help, or a command's flags with 'help <command>'"})
	return specs
}
