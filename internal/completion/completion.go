package completion

import (
	"fmt"
	"strings"

	"github.com/heureka-project/heureka"
)

// Spec is what the scripts know about one subcommand.
type Spec struct {
	Name, Summary string
	Flags         []string // with their dashes, e.g. --registry
}

func statusWords() string {
	var ws []string
	for _, s := range heureka.Statuses {
		ws = append(ws, string(s))
	}
	return strings.Join(ws, " ")
}

// Bash is the bash completion script for specs.
func Bash(specs []Spec) string {
	var names []string
	var cases strings.Builder
	for _, s := range specs {
		names = append(names, s.Name)
		if len(s.Flags) > 0 {
			fmt.Fprintf(&cases, "\t\t%s) flags=%q ;;\n", s.Name, strings.Join(s.Flags, " "))
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

// Zsh is the zsh completion script for specs.
func Zsh(specs []Spec) string {
	var cmds, cases strings.Builder
	for _, s := range specs {
		fmt.Fprintf(&cmds, "\t\t%s\n", zshQuote(s.Name+":"+s.Summary))
		if len(s.Flags) > 0 {
			fmt.Fprintf(&cases, "\t\t\t%s) compadd -- %s ;;\n", s.Name, strings.Join(s.Flags, " "))
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
