package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/heureka-project/heureka/internal/manpage"
)

// A manual page is made from a command's -h output (internal/manpage),
// read as completionSpec reads it (with a cancelled context, so that
// nothing can start).

// commandHelp runs one command with -h (and each subcommand its usage names
// with SUB -h, for flags of its own) and parses the output.
func commandHelp(ctx context.Context, name string, args ...string) string {
	var out bytes.Buffer
	_ = commands[name].run(ctx, append(args, "-h"), &out, &out)
	return out.String()
}

// manDoc is one command's parsed help, with the flags of the subcommands
// its usage lines name ("heureka auth hash ...") where they have their own.
func manDoc(ctx context.Context, name string) manpage.Doc {
	d := manpage.Parse(commandHelp(ctx, name))
	seen := map[string]bool{}
	for _, f := range d.Flags {
		seen[f.Name] = true
	}
	for _, u := range d.Usage {
		fields := strings.Fields(u)
		if len(fields) < 3 || fields[1] != name || strings.HasPrefix(fields[2], "-") || strings.ContainsAny(fields[2], "[|<") || strings.ToUpper(fields[2]) == fields[2] {
			continue
		}
		sub := fields[2]
		if slices.ContainsFunc(d.Sub, func(s manpage.SubFlags) bool { return s.Name == sub }) {
			continue
		}
		sd := manpage.Parse(commandHelp(ctx, name, sub))
		var own []manpage.Flag
		for _, f := range sd.Flags {
			if !seen[f.Name] {
				own = append(own, f)
			}
		}
		if len(own) > 0 {
			d.Sub = append(d.Sub, manpage.SubFlags{Name: sub, Flags: own})
		}
	}
	return d
}

// renderIndexPage writes heureka.1: every command with its summary.
func renderIndexPage(names []string) string {
	var b strings.Builder
	manpage.Header(&b, "heureka", "a service registry for HDFS clusters that speaks Netflix Eureka's protocol")
	b.WriteString(".SH SYNOPSIS\n.B heureka\n.I command\n[\\fIflags\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n.PP\n")
	b.WriteString(manpage.Escape("One binary: the registry server, the agent beside each NameNode and DataNode, the WebHDFS gateway and the operator tools. Each command's flags are in its own page, and in 'heureka COMMAND -h'.") + "\n")
	b.WriteString(".SH COMMANDS\n")
	for _, n := range names {
		fmt.Fprintf(&b, ".TP\n.BR heureka\\-%s (1)\n%s\n", manpage.Escape(n), manpage.Escape(commands[n].summary))
	}
	b.WriteString(".SH ENVIRONMENT\n.TP\n.B HEUREKA_REGISTRY\n")
	b.WriteString(manpage.Escape("comma-separated registry base URLs the operator commands use when --registry is not given") + "\n")
	b.WriteString(".TP\n.B HEUREKA_TOKEN\n" + manpage.Escape("a bearer token sent to registries that require credentials") + "\n")
	b.WriteString(".SH EXIT STATUS\n0 on success, 1 on failure, 2 for a usage error; the operator commands exit 3 when an application or instance is not found.\n")
	b.WriteString(".SH SEE ALSO\n")
	for i, n := range names {
		sep := ","
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, ".BR heureka\\-%s (1)%s\n", manpage.Escape(n), sep)
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
		pages["heureka-"+n+".1"] = manpage.Command(n, commands[n].summary, manDoc(cctx, n))
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
