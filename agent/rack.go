package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
)

// The agent learns its rack the way the NameNode would, so that the two
// agree: from a TableMapping file (net.topology.table.file.name) or by
// running the topology script (net.topology.script.file.name). Both are
// asked about every name the node goes by, IP address first (what the
// NameNode passes), then the host name; the first name with a rack other
// than heureka.DefaultRack wins.

// TableRack looks names up in a Hadoop TableMapping file: two columns
// separated by whitespace, a host name or IP address and its rack; blank
// lines and lines starting with '#' are skipped, and so are lines without
// exactly two columns, as Hadoop does. Lookups are exact strings. It
// returns the normalised rack of the first name found, or
// heureka.DefaultRack. The only errors are r's.
func TableRack(r io.Reader, names ...string) (string, error) {
	table := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Fields(line)
		if len(cols) != 2 {
			continue
		}
		if _, dup := table[cols[0]]; !dup {
			table[cols[0]] = cols[1]
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading the topology table: %w", err)
	}
	for _, n := range names {
		if rack, ok := table[n]; ok && n != "" {
			if r := heureka.NormalizeRack(rack); r != heureka.DefaultRack {
				return r, nil
			}
		}
	}
	return heureka.DefaultRack, nil
}

// maxScriptOutput bounds what a topology script may print.
const maxScriptOutput = 1 << 20

// ScriptRack runs a topology script the way Hadoop's ScriptBasedMapping
// does, "script name1 name2 ...", and reads one rack per argument from its
// output (separated by any whitespace). A non-zero exit or a wrong number
// of racks is an error, as it is for Hadoop. It returns the normalised
// rack of the first name that has one other than heureka.DefaultRack, or
// heureka.DefaultRack. ctx bounds the run.
func ScriptRack(ctx context.Context, script string, names ...string) (string, error) {
	var args []string
	for _, n := range names {
		if n != "" {
			args = append(args, n)
		}
	}
	if len(args) == 0 {
		return heureka.DefaultRack, nil
	}
	cmd := exec.CommandContext(ctx, script, args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: maxScriptOutput}
	cmd.Stderr = &limitWriter{w: &errb, n: 4 << 10}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("topology script %s: %w (stderr: %q)", script, err, strings.TrimSpace(errb.String()))
	}
	racks := strings.Fields(out.String())
	if len(racks) != len(args) {
		return "", fmt.Errorf("topology script %s returned %d values when %d were expected", script, len(racks), len(args))
	}
	for _, r := range racks {
		if r := heureka.NormalizeRack(r); r != heureka.DefaultRack {
			return r, nil
		}
	}
	return heureka.DefaultRack, nil
}

// limitWriter keeps the first n bytes and drops the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// scriptTimeout bounds one run of the topology script: Hadoop gives its
// own no bound, but a script that has not answered in half a minute is
// broken, and the agent should say so rather than never register.
const scriptTimeout = 30 * time.Second

// FindRack is the node's rack as the operator says it, in one of three
// ways (at most one of rack, table and script is set): rack itself, the
// TableMapping file table (TableRack), or the topology script (ScriptRack,
// bounded by half a minute); names are what the node goes by, IP address
// first. With none set it returns "", which registers
// heureka.DefaultRack.
func FindRack(ctx context.Context, rack, table, script string, names ...string) (string, error) {
	switch {
	case rack != "":
		return rack, nil
	case table != "":
		f, err := os.Open(table)
		if err != nil {
			return "", fmt.Errorf("topology table: %w", err)
		}
		defer f.Close()
		return TableRack(f, names...)
	case script != "":
		ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
		defer cancel()
		return ScriptRack(ctx, script, names...)
	}
	return "", nil
}
