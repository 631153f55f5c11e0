package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

// pickedNode is one line of `heureka pick`.
type pickedNode struct {
	ID          string   `json:"id"`
	Host        string   `json:"host"`
	DataAddress string   `json:"dataAddress"`
	Rack        string   `json:"rack"`
	Fullness    *float64 `json:"fullness,omitempty"` // disk_used / disk_total, 0-1
}

// pickResult is `heureka pick -o json`.
type pickResult struct {
	Requested int          `json:"requested"`
	Nodes     []pickedNode `json:"nodes"`
	Short     int          `json:"short"`
	Problem   string       `json:"problem,omitempty"`
}

// shortfallError is a pick that found fewer nodes than asked for.
type shortfallError struct{ msg string }

func (e *shortfallError) Error() string { return e.msg }
func (e *shortfallError) ExitCode() int { return exitNotFound }

func runPick(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	fs := newFlagSet("pick", "pick --cluster NAME [-n 3] [--writer HOST | --rack RACK] [--exclude HOST,...] [--probe] [-o json]", `
Prints the DataNodes a writer should use for a new block, chosen as HDFS's
default placement policy does (the writer's node or rack, then another rack,
then that rack again), skipping DataNodes that are not UP, draining, over 90%
full or excluded. --probe dials each chosen node's data port first and
replaces those that do not answer. When fewer than -n can be chosen it prints
those it has, says why on stderr and exits 3.`, stderr)
	o.addFlags(fs, true)
	cluster := fs.String("cluster", "", "HDFS cluster `name`, as the agents register it (hdfs-datanode.NAME)")
	n := fs.Int("n", hdfs.DefaultReplicas, "how many DataNodes to choose")
	writer := fs.String("writer", "", "the writing client's `host` name or IP address")
	rack := fs.String("rack", "", "the writer's `rack`, when the writer is not a DataNode")
	exclude := fs.String("exclude", "", "`hosts` (names, IPs or instance IDs), comma-separated, never to choose")
	probe := fs.Bool("probe", false, "dial each chosen DataNode's data port and replace those that do not answer")
	probeTimeout := fs.Duration("probe-timeout", time.Second, "how long one --probe dial may take")
	fullness := fs.Float64("fullness", hdfs.DefaultFullnessThreshold, "skip DataNodes more used than this fraction")
	if err := o.parseNone(fs, args); err != nil {
		return err
	}
	switch {
	case *cluster == "":
		return &usageError{"pick: --cluster is required: the name the agents register (hdfs-datanode.NAME)"}
	case *n < 1 || *n > 64:
		return &usageError{fmt.Sprintf("pick: -n %d: want 1 to 64 DataNodes", *n)}
	case *writer != "" && *rack != "":
		return &usageError{"pick: give --writer or --rack, not both (a DataNode writer's rack comes from the registry)"}
	case !(*fullness > 0 && *fullness <= 1):
		return &usageError{fmt.Sprintf("pick: --fullness %v: want a fraction in (0, 1], e.g. 0.9", *fullness)}
	case *probeTimeout <= 0:
		return &usageError{fmt.Sprintf("pick: --probe-timeout %v: want a positive duration", *probeTimeout)}
	}
	rc, ctx, done, err := o.session(ctx)
	if err != nil {
		return err
	}
	defer done()
	app := hdfs.AppName(hdfs.RoleDataNode, *cluster)
	excluded := commaList(*exclude)
	req := hdfs.PlacementRequest{Replicas: *n, Writer: *writer, WriterRack: *rack, FullnessThreshold: *fullness}
	picker, left, err := remotePicker(ctx, rc.client, *cluster, excluded, req)
	if errors.Is(err, client.ErrNotRegistered) {
		// No choice endpoint (plain Eureka, or an older heureka), or no such
		// cluster: choose here from the DataNode application.
		picker, left, err = localPicker(ctx, rc, app, excluded)
	}
	if err != nil {
		return rc.explain(err, "pick: read "+app)
	}
	if *probe {
		picker.Probe = hdfs.DialProbe(*probeTimeout)
	}
	pl, perr := picker.Choose(ctx, req)
	var callErr *pickCallError
	if errors.As(perr, &callErr) {
		return rc.explain(callErr.err, "pick: choose from "+app)
	}
	res := pickResult{Requested: *n, Nodes: []pickedNode{}, Short: *n - len(pl.Nodes)}
	for _, in := range pl.Nodes {
		res.Nodes = append(res.Nodes, pickedOf(in))
	}
	if perr != nil {
		res.Problem = perr.Error()
	}
	if err := printPick(stdout, res, o.json()); err != nil {
		return err
	}
	if perr != nil {
		also := ""
		if left > 0 {
			also = fmt.Sprintf(" (and %d left out with --exclude)", left)
		}
		return &shortfallError{fmt.Sprintf("pick: only %d of %d DataNodes of %s: %v%s", len(res.Nodes), *n, app, perr, also)}
	}
	return nil
}

// printPick prints the nodes chosen: as JSON, or as a table when there
// are any.
func printPick(w io.Writer, res pickResult, asJSON bool) error {
	if asJSON {
		return writeJSON(w, res)
	}
	if len(res.Nodes) == 0 {
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tHOST\tDATA ADDRESS\tRACK\tUSED")
	for _, p := range res.Nodes {
		used := "-"
		if p.Fullness != nil {
			used = fmt.Sprintf("%.0f%%", 100**p.Fullness)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cleanCell(p.ID), cleanCell(p.Host), cleanCell(p.DataAddress), cleanCell(p.Rack), used)
	}
	return tw.Flush()
}

func pickedOf(in *heureka.Instance) pickedNode {
	p := pickedNode{ID: in.ID, Host: in.HostName, Rack: hdfs.NormalizeRack(in.Metadata.Get(hdfs.MetaRack))}
	if p.Host == "" {
		p.Host = in.IPAddr
	}
	p.DataAddress, _ = hdfs.DataNodeAddress(in)
	info, _ := hdfs.ReadNodeInfo(in.Metadata)
	if info.DiskTotal > 0 {
		f := float64(info.DiskUsed) / float64(info.DiskTotal)
		p.Fullness = &f
	}
	return p
}

// remotePicker asks the registry to choose (GET /v1/hdfs/pick) and returns
// a Picker whose later rounds (after failed probes) ask again, avoiding the
// nodes that failed; left is how many DataNodes --exclude left out.
func remotePicker(ctx context.Context, c *client.Client, cluster string, excluded []string, req hdfs.PlacementRequest) (*hdfs.Picker, int, error) {
	ask := func(ctx context.Context, req hdfs.PlacementRequest) (*client.PickResult, error) {
		pr := client.PickRequest{Cluster: cluster, N: req.Replicas, Writer: req.Writer, Rack: req.WriterRack,
			Exclude: excluded, Fullness: req.FullnessThreshold}
		for id := range req.Penalized {
			pr.Avoid = append(pr.Avoid, id)
		}
		slices.Sort(pr.Avoid)
		return c.PickDataNodes(ctx, pr)
	}
	first, err := ask(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	chooser := func(ctx context.Context, req hdfs.PlacementRequest) (hdfs.Placement, error) {
		res := first
		if first == nil || len(req.Penalized) > 0 {
			var err error
			if res, err = ask(ctx, req); err != nil {
				return hdfs.Placement{Requested: req.Replicas, Short: req.Replicas}, &pickCallError{err}
			}
		}
		first = nil
		pl := hdfs.Placement{Requested: res.Requested, Nodes: res.Nodes, Short: res.Short}
		if res.Problem != "" {
			return pl, heureka.Errorf(heureka.EUNAVAILABLE, "%s", res.Problem)
		}
		return pl, nil
	}
	return &hdfs.Picker{Chooser: chooser}, first.Excluded, nil
}

// pickCallError is a failure to ask the registry, as opposed to a
// shortfall.
type pickCallError struct{ err error }

func (e *pickCallError) Error() string { return e.err.Error() }
func (e *pickCallError) Unwrap() error { return e.err }

// localPicker reads the DataNode application and chooses here, for a
// registry without the choice endpoint.
func localPicker(ctx context.Context, rc *registryConn, app string, excluded []string) (*hdfs.Picker, int, error) {
	a, err := rc.application(ctx, app) // this application only, however big the registry
	if err != nil {
		return nil, 0, err
	}
	skip := map[string]bool{}
	for _, h := range excluded {
		skip[strings.ToLower(h)] = true
	}
	var nodes []*heureka.Instance
	left := 0
	for _, in := range a.Instances {
		if skip[strings.ToLower(in.ID)] || skip[in.IPAddr] || skip[strings.ToLower(in.HostName)] {
			left++
			continue
		}
		nodes = append(nodes, in)
	}
	return &hdfs.Picker{DataNodes: func() []*heureka.Instance { return nodes }}, left, nil
}
