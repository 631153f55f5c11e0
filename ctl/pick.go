package ctl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

// PickOptions says what Pick chooses: DataNodes for a new block, or,
// with Role, members of another role's cluster (see pickrole.go).
type PickOptions struct {
	// Cluster is the cluster, as the agents register it
	// (hdfs-datanode.CLUSTER, ROLE.CLUSTER).
	Cluster string
	// N is how many to choose, up to 64; 0 is the default:
	// hdfs.DefaultReplicas DataNodes, or every member of Role.
	N int
	// Role, when set, chooses members of that role's cluster
	// (yarn-resourcemanager, kafka-broker, ...) instead of DataNodes: UP
	// ones, the lead first (the active ResourceManager, the controller,
	// ...), then one rack after another, paused ones last.
	Role string
	// State, with Role, chooses only members in that role state
	// ("active", "leader", ...).
	State string
	// List, with Role, prints only the chosen members' addresses,
	// host:port comma-separated on one line: what bootstrap.servers,
	// hbase.client.bootstrap.servers or a ZooKeeper connect string take.
	List bool
	// Writer is the writing client's host name or IP address; Rack is the
	// writer's rack when it is not a DataNode. At most one is set.
	Writer, Rack string
	// Exclude are hosts (names, IPs or instance IDs) never to choose.
	Exclude []string
	// Probe dials each chosen DataNode's data port (a member's registered
	// port) within ProbeTimeout and replaces those that do not answer.
	Probe        bool
	ProbeTimeout time.Duration
	// Fullness skips DataNodes more used than this fraction.
	Fullness float64
}

// DefaultPickOptions returns the defaults, each with its reason; Cluster
// is left empty.
func DefaultPickOptions() PickOptions {
	return PickOptions{
		// A DataNode on the same network answers a dial in well under a
		// millisecond; a second is a dead or unreachable host.
		ProbeTimeout: time.Second,
		// The project's placement threshold.
		Fullness: hdfs.DefaultFullnessThreshold,
	}
}

// Validate reports the first option that cannot work, as a
// *heureka.ConfigError.
func (o PickOptions) Validate() error {
	switch {
	case o.Cluster == "":
		return heureka.InvalidConfig("Cluster", nil, "is required: the name the agents register (hdfs-datanode.NAME)")
	case o.N < 0 || o.N > 64:
		return heureka.InvalidConfig("N", o.N, "want 1 to 64 (0: the default)")
	case o.Role != "":
		return o.validateRole()
	case o.State != "" || o.List:
		return heureka.InvalidConfig("State", o.State, "a role state and a list are for the members of a --role; DataNodes are placed")
	case o.Writer != "" && o.Rack != "":
		return heureka.InvalidConfig("Writer", o.Writer, "give a writer or its rack, not both (a DataNode writer's rack comes from the registry)")
	case !(o.Fullness > 0 && o.Fullness <= 1):
		return heureka.InvalidConfig("Fullness", o.Fullness, "want a fraction in (0, 1], e.g. 0.9")
	}
	return heureka.Positive(heureka.NamedDuration{Field: "ProbeTimeout", Value: o.ProbeTimeout})
}

// Picked is one DataNode Pick chose.
type Picked struct {
	ID          string   `json:"id"`
	Host        string   `json:"host"`
	DataAddress string   `json:"dataAddress"`
	Rack        string   `json:"rack"`
	Fullness    *float64 `json:"fullness,omitempty"` // disk_used / disk_total, 0-1, to 4 places
}

// PickResult is `heureka pick -o json`.
type PickResult struct {
	Requested int      `json:"requested"`
	Nodes     []Picked `json:"nodes"`
	Short     int      `json:"short"`
	Problem   string   `json:"problem,omitempty"`
}

// Pick prints the DataNodes a writer should use for a new block, chosen
// as HDFS's default placement policy does, by the registry (GET
// /v1/hdfs/pick) or, from one without that, here from the DataNode
// application; with o.Role, the members of that role's cluster
// (pickMembers). When fewer than N can be chosen it prints those it has
// and returns a *NotFoundError that says why.
func Pick(ctx context.Context, c *Conn, out Output, o PickOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Role != "" {
		return pickMembers(ctx, c, out, o)
	}
	if o.N == 0 {
		o.N = hdfs.DefaultReplicas // HDFS's default replication factor
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	app := hdfs.AppName(hdfs.RoleDataNode, o.Cluster)
	req := hdfs.PlacementRequest{Replicas: o.N, Writer: o.Writer, WriterRack: o.Rack, FullnessThreshold: o.Fullness}
	picker, left, err := remotePicker(ctx, c.client, o.Cluster, o.Exclude, req)
	if errors.Is(err, client.ErrNotRegistered) {
		// No choice endpoint (plain Eureka, or an older heureka), or no such
		// cluster: choose here from the DataNode application.
		picker, left, err = c.localPicker(ctx, app, o.Exclude)
	}
	if err != nil {
		return c.Explain(err, "pick: read "+app)
	}
	if o.Probe {
		picker.Probe = hdfs.DialProbe(o.ProbeTimeout)
	}
	pl, perr := picker.Choose(ctx, req)
	var callErr *pickCallError
	if errors.As(perr, &callErr) {
		return c.Explain(callErr.err, "pick: choose from "+app)
	}
	res := PickResult{Requested: o.N, Nodes: []Picked{}, Short: o.N - len(pl.Nodes)}
	for _, in := range pl.Nodes {
		res.Nodes = append(res.Nodes, pickedOf(in))
	}
	if perr != nil {
		res.Problem = perr.Error()
	}
	if err := printPick(out, res); err != nil {
		return err
	}
	if perr == nil {
		return nil
	}
	also := ""
	if left > 0 {
		also = fmt.Sprintf(" (and %d left out with --exclude)", left)
	}
	return &NotFoundError{fmt.Sprintf("pick: only %d of %d DataNodes of %s: %v%s", len(res.Nodes), o.N, app, perr, also)}
}

// printPick prints the nodes chosen: as JSON, or as a table when there
// are any.
func printPick(out Output, res PickResult) error {
	if out.JSON {
		return writeJSON(out.W, res)
	}
	if len(res.Nodes) == 0 {
		return nil
	}
	tw := newTable(out.W)
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

// pickedOf is in as Pick prints it. Its fullness is rounded to four
// places: a DataNode's figures are whole bytes, and their ratio printed
// whole (0.5799999999999272) reads as noise.
func pickedOf(in *heureka.Instance) Picked {
	p := Picked{ID: in.ID, Host: in.HostName, Rack: hdfs.NormalizeRack(in.Metadata.Get(hdfs.MetaRack))}
	if p.Host == "" {
		p.Host = in.IPAddr
	}
	p.DataAddress, _ = hdfs.DataNodeAddress(in)
	info, _ := hdfs.ReadNodeInfo(in.Metadata)
	if info.DiskTotal > 0 {
		f := math.Round(float64(info.DiskUsed)/float64(info.DiskTotal)*1e4) / 1e4
		p.Fullness = &f
	}
	return p
}

// remotePicker asks the registry to choose (GET /v1/hdfs/pick) and returns
// a Picker whose later rounds (after failed probes) ask again, avoiding the
// nodes that failed; left is how many DataNodes the exclusions left out.
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
	left := first.Excluded
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
	return &hdfs.Picker{Chooser: chooser}, left, nil
}

// pickCallError is a failure to ask the registry, as opposed to a
// shortfall.
type pickCallError struct{ err error }

func (e *pickCallError) Error() string { return e.err.Error() }
func (e *pickCallError) Unwrap() error { return e.err }

// localPicker reads the DataNode application and chooses here, for a
// registry without the choice endpoint.
func (c *Conn) localPicker(ctx context.Context, app string, excluded []string) (*hdfs.Picker, int, error) {
	a, err := c.application(ctx, app) // this application only, however big the registry
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
