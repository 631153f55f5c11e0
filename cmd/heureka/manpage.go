package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A manual page is made from a command's -h output, read as completionSpec
// reads it (with a cancelled context, so that nothing can start). That text
// has a known shape: "Usage:" lines, a description, "Flags:" followed by
// flag.PrintDefaults's pairs of lines ("  -name arg" and "    \thelp"), and
// optionally "Exit codes: ..." after them.

// helpDoc is one command's help text, taken apart.
type helpDoc struct {
	usage       []string // "heureka status set ID STATUS [flags]", ...
	description []string // lines, paragraphs separated by ""
	flags       []flagDoc
	exit        string // the "Exit codes:" paragraph, if any, without its label
	subFlags    []subFlags
}

type flagDoc struct{ name, arg, help string }

type subFlags struct {
	name  string // "hash" for "heureka auth hash"
	flags []flagDoc
}

// commandHelp runs one command with -h (and each subcommand its usage names
// with SUB -h, for flags of its own) and parses the output.
func commandHelp(ctx context.Context, name string, args ...string) string {
	var out bytes.Buffer
	_ = commands[name].run(ctx, append(args, "-h"), &out, &out)
	return out.String()
}

var (
	usageRe    = regexp.MustCompile(`^\s*(?:Usage:)?\s*(heureka\s.*)$`)
	flagNameRe = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9-]*)(?: (.*))?$`)
)

func parseHelp(text string) helpDoc {
	var d helpDoc
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	i := 0
	inFlags := false
	if len(lines) > 0 && strings.HasPrefix(lines[0], "Usage of ") { // a bare flag.FlagSet's usage
		i, inFlags = 1, true
	}
	// Usage: "Usage: heureka X" and continuation lines, or "Usage:", a
	// blank line and tab-indented "heureka ..." lines.
	if i == 0 && len(lines) > 0 && strings.HasPrefix(lines[0], "Usage") {
		first := strings.TrimSpace(strings.TrimPrefix(lines[i], "Usage:"))
		i++
		if first != "" {
			d.usage = append(d.usage, first)
		} else if i < len(lines) && lines[i] == "" {
			i++
		}
		for ; i < len(lines); i++ {
			m := usageRe.FindStringSubmatch(lines[i])
			if m == nil || lines[i] == strings.TrimSpace(lines[i]) && !strings.HasPrefix(lines[i], "heureka") {
				break
			}
			if !strings.HasPrefix(lines[i], " ") && !strings.HasPrefix(lines[i], "\t") {
				break
			}
			d.usage = append(d.usage, strings.TrimSpace(m[1]))
		}
	}
	var rest []string
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "Flags:" || strings.HasPrefix(l, "Usage of "):
			inFlags = true
		case inFlags && flagNameRe.MatchString(l):
			m := flagNameRe.FindStringSubmatch(l)
			d.flags = append(d.flags, flagDoc{name: m[1], arg: m[2]})
		case inFlags && strings.HasPrefix(l, "    \t") && len(d.flags) > 0:
			f := &d.flags[len(d.flags)-1]
			f.help = strings.TrimSpace(f.help + " " + strings.TrimSpace(l))
		case strings.HasPrefix(l, "Exit codes:"):
			inFlags = false
			exit := strings.TrimSpace(strings.TrimPrefix(l, "Exit codes:"))
			for i+1 < len(lines) && lines[i+1] != "" {
				i++
				exit += " " + strings.TrimSpace(lines[i])
			}
			d.exit = exit
		default:
			if inFlags && l == "" {
				continue
			}
			inFlags = false
			rest = append(rest, l)
		}
	}
	// Trim blank lines at either end and collapse runs of them.
	for _, l := range rest {
		if l == "" && (len(d.description) == 0 || d.description[len(d.description)-1] == "") {
			continue
		}
		d.description = append(d.description, l)
	}
	for len(d.description) > 0 && d.description[len(d.description)-1] == "" {
		d.description = d.description[:len(d.description)-1]
	}
	return d
}

// manDoc is one command's parsed help, with the flags of the subcommands
// its usage lines name ("heureka auth hash ...") where they have their own.
func manDoc(ctx context.Context, name string) helpDoc {
	d := parseHelp(commandHelp(ctx, name))
	seen := map[string]bool{}
	for _, f := range d.flags {
		seen[f.name] = true
	}
	for _, u := range d.usage {
		fields := strings.Fields(u)
		if len(fields) < 3 || fields[1] != name || strings.ContainsAny(fields[2], "-[|<") || strings.ToUpper(fields[2]) == fields[2] {
			continue
		}
		sub := fields[2]
		if slices.ContainsFunc(d.subFlags, func(s subFlags) bool { return s.name == sub }) {
			continue
		}
		sd := parseHelp(commandHelp(ctx, name, sub))
		var own []flagDoc
		for _, f := range sd.flags {
			if !seen[f.name] {
				own = append(own, f)
			}
		}
		if len(own) > 0 {
			d.subFlags = append(d.subFlags, subFlags{name: sub, flags: own})
		}
	}
	return d
}

// roff escapes text for a roff text line: backslashes, hyphens (minus
// signs in flags and commands), characters outside ASCII (as \[uXXXX], which
// groff reads whatever the locale), and a leading control character.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.ContainsFunc(s, func(r rune) bool { return r > 127 }) {
		var b strings.Builder
		for _, r := range s {
			if r > 127 {
				fmt.Fprintf(&b, `\[u%04X]`, r)
			} else {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

const manSource = `.\" Generated by "heureka man" from the commands' own flags; do not edit.` + "\n"

func manHeader(b *strings.Builder, title, summary string) {
	b.WriteString(manSource)
	fmt.Fprintf(b, ".TH %s 1 \"\" heureka \"heureka manual\"\n", strings.ToUpper(title))
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", roff(title), roff(summary))
}

// renderManPage writes the page of command name (title heureka-NAME).
func renderManPage(name, summary string, d helpDoc) string {
	var b strings.Builder
	manHeader(&b, "heureka-"+name, summary)
	b.WriteString(".SH SYNOPSIS\n")
	for i, u := range d.usage {
		if i > 0 {
			b.WriteString(".br\n")
		}
		fmt.Fprintf(&b, "%s\n", roff(u))
	}
	if len(d.description) > 0 {
		b.WriteString(".SH DESCRIPTION\n")
		renderText(&b, d.description)
	}
	if len(d.flags) > 0 || len(d.subFlags) > 0 {
		b.WriteString(".SH OPTIONS\n")
		renderFlags(&b, d.flags)
		for _, s := range d.subFlags {
			fmt.Fprintf(&b, ".SS %s\n", roff("heureka "+name+" "+s.name))
			renderFlags(&b, s.flags)
		}
	}
	b.WriteString(".SH EXIT STATUS\n")
	if d.exit != "" {
		fmt.Fprintf(&b, "%s\n", roff(d.exit))
	} else {
		b.WriteString("0 on success, 1 on failure, 2 for a usage error.\n")
	}
	b.WriteString(".SH SEE ALSO\n.BR heureka (1)\n")
	return b.String()
}

// renderText writes paragraphs: filled, unless one of its lines is
// indented (an example, a table, a list with hanging indents), when it is
// kept as it is.
func renderText(b *strings.Builder, lines []string) {
	for len(lines) > 0 {
		n := slices.Index(lines, "")
		if n < 0 {
			n = len(lines)
		}
		para := lines[:n]
		if slices.ContainsFunc(para, func(l string) bool { return strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ") }) {
			b.WriteString(".PP\n.RS 4\n.nf\n")
			for _, l := range para {
				fmt.Fprintf(b, "%s\n", roff(strings.TrimPrefix(strings.ReplaceAll(l, "\t", "    "), "    ")))
			}
			b.WriteString(".fi\n.RE\n")
		} else {
			b.WriteString(".PP\n")
			for _, l := range para {
				fmt.Fprintf(b, "%s\n", roff(l))
			}
		}
		lines = lines[min(n+1, len(lines)):]
	}
}

func renderFlags(b *strings.Builder, flags []flagDoc) {
	for _, f := range flags {
		dash := "--"
		if len(f.name) == 1 {
			dash = "-"
		}
		b.WriteString(".TP\n")
		if f.arg != "" {
			fmt.Fprintf(b, ".BI \"%s\" \" %s\"\n", roff(dash+f.name), strings.ReplaceAll(roff(f.arg), `"`, `\(dq`))
		} else {
			fmt.Fprintf(b, ".B %s\n", roff(dash+f.name))
		}
		fmt.Fprintf(b, "%s\n", roff(f.help))
	}
}

// renderIndexPage writes heureka.1: every command with its summary.
func renderIndexPage(names []string) string {
	var b strings.Builder
	manHeader(&b, "heureka", "a service registry for HDFS clusters that speaks Netflix Eureka's protocol")
	b.WriteString(".SH SYNOPSIS\n.B heureka\n.I command\n[\\fIflags\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n.PP\n")
	b.WriteString(roff("One binary: the registry server, the agent beside each NameNode and DataNode, the WebHDFS gateway and the operator tools. Each command's flags are in its own page, and in 'heureka COMMAND -h'.") + "\n")
	b.WriteString(".SH COMMANDS\n")
	for _, n := range names {
		fmt.Fprintf(&b, ".TP\n.BR heureka\\-%s (1)\n%s\n", roff(n), roff(commands[n].summary))
	}
	b.WriteString(".SH ENVIRONMENT\n.TP\n.B HEUREKA_REGISTRY\n")
	b.WriteString(roff("comma-separated registry base URLs the operator commands use when --registry is not given") + "\n")
	b.WriteString(".TP\n.B HEUREKA_TOKEN\n" + roff("a bearer token sent to registries that require credentials") + "\n")
	b.WriteString(".SH EXIT STATUS\n0 on success, 1 on failure, 2 for a usage error; the operator commands exit 3 when an application or instance is not found.\n")
	b.WriteString(".SH SEE ALSO\n")
	for i, n := range names {
		sep := ","
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, ".BR heureka\\-%s (1)%s\n", roff(n), sep)
	}
	return b.String()
}

// manPages returns every page by file name (heureka.1, heureka-NAME.1).
func manPages(ctx context.Context) map[string]string {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	names := slices.Sorted(maps.Keys(commands))
	pages := map[string]string{"heureka.1": renderIndexPage(names)}
	for _, n := range names {
		pages["heureka-"+n+".1"] = renderManPage(n, commands[n].summary, manDoc(cctx, n))
	}
	return pages
}

// writeManPages writes the pages into dir, gzipped if asked, and returns the
// names written.
func writeManPages(ctx context.Context, dir string, gz bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("man: %w", err)
	}
	pages := manPages(ctx)
	var written []string
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		data := []byte(pages[name])
		if gz {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write(data)
			if err := zw.Close(); err != nil {
				return nil, fmt.Errorf("man: compressing %s: %w", name, err)
			}
			data, name = buf.Bytes(), name+".gz"
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, fmt.Errorf("man: %w", err)
		}
		written = append(written, p)
	}
	return written, nil
}
