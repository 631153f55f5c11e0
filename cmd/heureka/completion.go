package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
)

const completionHelp = `Usage: heureka completion bash|zsh

Prints a completion script for subcommands, their flags, application names
and instance IDs (read from the registry in $HEUREKA_REGISTRY when you press
Tab).

  bash:  source <(heureka completion bash)          # in ~/.bashrc
  zsh:   source <(heureka completion zsh)           # in ~/.zshrc, after compinit
         or: heureka completion zsh > "${fpath[1]}/_heureka"
`

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
		_, err := io.WriteString(stdout, bashCompletion(spec))
		return err
	case "zsh":
		_, err := io.WriteString(stdout, zshCompletion(spec))
		return err
	}
	return &usageError{fmt.Sprintf("completion: unknown shell %q; want bash or zsh", args[0])}
}

// completionList prints application names or instance IDs, one a line, for
// the scripts' dynamic completion. It is quiet and quick on failure.
func completionList(ctx context.Context, what string, stdout io.Writer) error {
	if what != "apps" && what != "ids" {
		return &usageError{"completion --list: want apps or ids"}
	}
	var o cliOptions
	o.addFlags(newFlagSet("completion", "", "", io.Discard), false)
	o.timeout = 2 * time.Second // someone is waiting on Tab
	rc, ctx, done, err := o.session(ctx)
	if err != nil {
		return nil
	}
	defer done()
	apps, _, err := rc.listing(ctx)
	if err != nil {
		return nil
	}
	for _, a := range apps.Apps {
		if what == "apps" {
			fmt.Fprintln(stdout, strings.ToLower(a.Name))
			continue
		}
		for _, in := range a.Instances {
			fmt.Fprintln(stdout, in.ID)
		}
	}
	return nil
}

// cmdSpec is what the scripts know about one subcommand.
type cmdSpec struct {
	name, summary string
	flags         []string // with their dashes, e.g. --registry
}

var flagLine = regexp.MustCompile(`(?m)^\s+-([A-Za-z0-9][A-Za-z0-9-]*)`)

// completionSpec lists every subcommand with its flags, read from the
// command's own help (run with -h, with a context that is already
// cancelled, so that nothing can start).
func completionSpec(ctx context.Context) []cmdSpec {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var specs []cmdSpec
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		c := commands[name]
		s := cmdSpec{name: name, summary: c.summary}
		if name != "completion" {
			var out bytes.Buffer
			_ = c.run(cctx, []string{"-h"}, &out, &out)
			for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
				f := "--" + m[1]
				if len(m[1]) == 1 {
					f = "-" + m[1]
				}
				if !slices.Contains(s.flags, f) {
					s.flags = append(s.flags, f)
				}
			}
		}
		specs = append(specs, s)
	}
	specs = append(specs, cmdSpec{name: "help", summary: "print help, or a command's flags with 'help <command>'"})
	return specs
}

func statusWords() string {
	var ws []string
	for _, s := range heureka.Statuses {
		ws = append(ws, string(s))
	}
	return strings.Join(ws, " ")
}

func bashCompletion(specs []cmdSpec) string {
	var names []string
	var cases strings.Builder
	for _, s := range specs {
		names = append(names, s.name)
		if len(s.flags) > 0 {
			fmt.Fprintf(&cases, "\t\t%s) flags=%q ;;\n", s.name, strings.Join(s.flags, " "))
		}
	}
	return `# bash completion for heureka. Load it with: source <(heureka completion bash)
_heureka() {
	local cur prev cmd flags
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	cmd="${COMP_WORDS[1]}"
	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=( $(compgen -W "` + strings.Join(names, " ") + `" -- "$cur") )
		return
	fi
	case "$prev" in
		-o|--o|-output|--output) COMPREPLY=( $(compgen -W "table json" -- "$cur") ); return ;;
		-app|--app) COMPREPLY=( $(compgen -W "$(heureka completion --list apps 2>/dev/null)" -- "$cur") ); return ;;
		-value|--value|-status|--status) COMPREPLY=( $(compgen -W "` + statusWords() + `" -- "$cur") ); return ;;
		-registry|--registry|-alertmanager|--alertmanager|-webhook|--webhook|-timeout|--timeout|-since|--since) return ;;
	esac
	if [[ $cur == -* ]]; then
		case "$cmd" in
` + cases.String() + `		esac
		COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
		return
	fi
	case "$cmd" in
		instances)
			COMPREPLY=( $(compgen -W "$(heureka completion --list apps 2>/dev/null)" -- "$cur") ) ;;
		show|deregister)
			COMPREPLY=( $(compgen -W "$(heureka completion --list ids 2>/dev/null)" -- "$cur") ) ;;
		status)
			case $COMP_CWORD in
				2) COMPREPLY=( $(compgen -W "set clear" -- "$cur") ) ;;
				3) COMPREPLY=( $(compgen -W "$(heureka completion --list ids 2>/dev/null)" -- "$cur") ) ;;
				4) [[ ${COMP_WORDS[2]} == set ]] && COMPREPLY=( $(compgen -W "` + statusWords() + `" -- "$cur") ) ;;
			esac ;;
		completion)
			COMPREPLY=( $(compgen -W "bash zsh" -- "$cur") ) ;;
		help)
			COMPREPLY=( $(compgen -W "` + strings.Join(names, " ") + `" -- "$cur") ) ;;
	esac
}
complete -F _heureka heureka
`
}

// zshQuote quotes s for a single-quoted zsh word in a _describe list,
// where ':' separates the name from its description.
func zshQuote(s string) string {
	s = strings.ReplaceAll(s, `:`, `\:`)
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func zshCompletion(specs []cmdSpec) string {
	var cmds, cases strings.Builder
	for _, s := range specs {
		fmt.Fprintf(&cmds, "\t\t%s\n", zshQuote(s.name+":"+s.summary))
		if len(s.flags) > 0 {
			fmt.Fprintf(&cases, "\t\t\t%s) compadd -- %s ;;\n", s.name, strings.Join(s.flags, " "))
		}
	}
	return `#compdef heureka
# zsh completion for heureka. Load it with: source <(heureka completion zsh)
# (after compinit), or save it as _heureka in a directory on $fpath.
_heureka() {
	local -a cmds
	cmds=(
` + cmds.String() + `	)
	if (( CURRENT == 2 )); then
		_describe 'command' cmds
		return
	fi
	local cmd=${words[2]}
	case ${words[CURRENT-1]} in
		-o|--o|-output|--output) compadd table json; return ;;
		-app|--app) compadd -- ${(f)"$(heureka completion --list apps 2>/dev/null)"}; return ;;
		-value|--value|-status|--status) compadd ` + statusWords() + `; return ;;
		-registry|--registry|-alertmanager|--alertmanager|-webhook|--webhook|-timeout|--timeout|-since|--since) return ;;
	esac
	if [[ ${words[CURRENT]} == -* ]]; then
		case $cmd in
` + cases.String() + `		esac
		return
	fi
	case $cmd in
		instances) compadd -- ${(f)"$(heureka completion --list apps 2>/dev/null)"} ;;
		show|deregister) compadd -- ${(f)"$(heureka completion --list ids 2>/dev/null)"} ;;
		status)
			case $CURRENT in
				3) compadd set clear ;;
				4) compadd -- ${(f)"$(heureka completion --list ids 2>/dev/null)"} ;;
				5) [[ ${words[3]} == set ]] && compadd ` + statusWords() + ` ;;
			esac ;;
		completion) compadd bash zsh ;;
		help) _describe 'command' cmds ;;
	esac
}
if [[ "${funcstack[1]}" == "_heureka" ]]; then
	_heureka "$@"
else
	compdef _heureka heureka
fi
`
}
