package ctl

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/roles"
)

// AppSummary is one line of `heureka apps`.
type AppSummary struct {
	App       string                 `json:"app"`
	Instances int                    `json:"instances"`
	Statuses  map[heureka.Status]int `json:"statuses"`
}

// Apps lists the registered applications with their number of instances
// by status.
func Apps(ctx context.Context, c *Conn, out Output) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	apps, err := c.client.Apps(ctx)
	if err != nil {
		return c.Explain(err, "list applications")
	}
	list := make([]AppSummary, 0, len(apps.Apps))
	for _, a := range apps.Apps {
		s := AppSummary{App: a.Name, Instances: len(a.Instances), Statuses: map[heureka.Status]int{}}
		for _, in := range a.Instances {
			s.Statuses[in.Status]++
		}
		list = append(list, s)
	}
	if out.JSON {
		return writeJSON(out.W, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(out.Notes, "No applications are registered.")
		return nil
	}
	tw := newTable(out.W)
	fmt.Fprintln(tw, "APP\tINSTANCES\tUP\tDOWN\tOUT_OF_SERVICE\tSTARTING\tUNKNOWN")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", cleanCell(s.App), s.Instances,
			s.Statuses[heureka.StatusUp], s.Statuses[heureka.StatusDown], s.Statuses[heureka.StatusOutOfService],
			s.Statuses[heureka.StatusStarting], s.Statuses[heureka.StatusUnknown])
	}
	return tw.Flush()
}

// View is an instance as the operator commands show it: the Eureka fields
// that matter, its role state, and the HDFS metadata, read.
type View struct {
	App              string         `json:"app"`
	ID               string         `json:"id"`
	HostName         string         `json:"hostName"`
	IPAddr           string         `json:"ipAddr"`
	Status           heureka.Status `json:"status"`
	OverriddenStatus heureka.Status `json:"overriddenStatus,omitempty"`
	Port             int            `json:"port,omitempty"`
	SecurePort       int            `json:"securePort,omitempty"`
	VIPAddress       string         `json:"vipAddress,omitempty"`
	Rack             string         `json:"rack,omitempty"`
	DiskUsed         int64          `json:"diskUsed,omitempty"`
	DiskTotal        int64          `json:"diskTotal,omitempty"`
	DiskPercent      *float64       `json:"diskPercent,omitempty"`
	Blocks           int64          `json:"blocks,omitempty"`
	Version          string         `json:"version,omitempty"`
	// RoleState is the role state its agent registered (roles.State):
	// active, standby, leader, follower, controller, master, ...
	RoleState string `json:"roleState,omitempty"`
	// Lead says that RoleState leads the instance's cluster (the active
	// ResourceManager, the ZooKeeper leader, ...; roles.Role.IsLead).
	Lead            bool             `json:"lead,omitempty"`
	HAState         string           `json:"haState,omitempty"`
	AdminState      string           `json:"adminState,omitempty"`
	RegisteredAt    *time.Time       `json:"registeredAt,omitempty"`
	LastRenewal     *time.Time       `json:"lastRenewal,omitempty"`
	LastUpdated     *time.Time       `json:"lastUpdated,omitempty"`
	RenewalInterval int              `json:"renewalIntervalSecs,omitempty"`
	LeaseDuration   int              `json:"leaseDurationSecs,omitempty"`
	MetadataProblem string           `json:"metadataProblem,omitempty"`
	Metadata        heureka.Metadata `json:"metadata"` // {} when empty
}

func msTime(ms int64) *time.Time {
	if ms <= 0 {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}

// ViewOf is in as the operator commands show it.
func ViewOf(in *heureka.Instance) View {
	info, err := hdfs.ReadNodeInfo(in.Metadata)
	v := View{
		App: in.App, ID: in.ID, HostName: in.HostName, IPAddr: in.IPAddr,
		Status: in.Status, VIPAddress: in.VIPAddress,
		Rack: info.Rack, DiskUsed: info.DiskUsed, DiskTotal: info.DiskTotal, Blocks: info.BlockCount,
		Version: info.Version, RoleState: roles.State(in.Metadata), HAState: string(info.HAState), AdminState: info.Status,
		RegisteredAt:    msTime(in.Lease.RegistrationTimestamp),
		LastRenewal:     msTime(in.Lease.LastRenewalTimestamp),
		LastUpdated:     msTime(in.LastUpdatedTimestamp),
		RenewalInterval: in.Lease.RenewalIntervalSecs,
		LeaseDuration:   in.Lease.DurationSecs,
		Metadata:        in.Metadata,
	}
	if r, _, ok := roles.Parse(in.App); ok {
		v.Lead = r.IsLead(v.RoleState)
	}
	if in.OverriddenStatus != "" && in.OverriddenStatus != heureka.StatusUnknown {
		v.OverriddenStatus = in.OverriddenStatus
	}
	if in.Port.Enabled {
		v.Port = in.Port.Number
	}
	if in.SecurePort.Enabled {
		v.SecurePort = in.SecurePort.Number
	}
	if info.DiskTotal > 0 {
		p := math.Round(float64(info.DiskUsed)/float64(info.DiskTotal)*1000) / 10
		v.DiskPercent = &p
	}
	if err != nil {
		v.MetadataProblem = err.Error()
	}
	return v
}

func (v View) diskCell() string {
	if v.DiskPercent == nil {
		return "-"
	}
	return strconv.FormatFloat(*v.DiskPercent, 'f', 1, 64) + "%"
}

func (v View) blocksCell() string {
	if v.Blocks == 0 {
		return "-"
	}
	return strconv.FormatInt(v.Blocks, 10)
}

func (v View) statusCell() string {
	if v.OverriddenStatus != "" {
		return string(v.Status) + " (override)"
	}
	return string(v.Status)
}

func (v View) renewalMs() int64 {
	if v.LastRenewal == nil {
		return 0
	}
	return v.LastRenewal.UnixMilli()
}

// MaxHosts bounds InstancesOptions.Hosts: a batch as large as a topology
// script's many times over, and the most one lookup request carries.
const MaxHosts = client.MaxLookupHosts

// InstancesOptions says which instances Instances lists.
type InstancesOptions struct {
	// App is the application, in any case (hdfs-datanode.prod).
	App string
	// Status, when set, lists only instances with it.
	Status heureka.Status
	// Hosts, when set, lists only instances on these hosts (names in any
	// case, or IP addresses), at most MaxHosts: a heureka server looks
	// them up itself, so the answer costs the hosts, not the application.
	Hosts []string
}

// Validate reports the first option that cannot work, as a
// *heureka.ConfigError.
func (o InstancesOptions) Validate() error {
	switch {
	case o.App == "":
		return heureka.InvalidConfig("App", nil, "is empty: name one application, e.g. hdfs-datanode.prod (see `heureka apps`)")
	case o.Hosts != nil && len(o.Hosts) == 0:
		return heureka.InvalidConfig("Hosts", "", "want host names or IP addresses, comma-separated")
	case len(o.Hosts) > MaxHosts:
		return heureka.InvalidConfig("Hosts", nil, "%d hosts; at most %d at once", len(o.Hosts), MaxHosts)
	}
	if o.Status != "" {
		if _, err := heureka.ParseStatus(string(o.Status)); err != nil {
			return heureka.InvalidConfig("Status", string(o.Status), "%v", err)
		}
	}
	return nil
}

// Instances lists an application's instances: ID, status, rack, disk
// fullness, block count, version, last renewal and, for a role that has
// them, the role state (a NameNode's HA state, a ZooKeeper server's
// leader or follower, ...).
func Instances(ctx context.Context, c *Conn, out Output, o InstancesOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	var ins []*heureka.Instance
	var err error
	if o.Hosts != nil {
		ins, err = c.instancesOn(ctx, o.App, o.Hosts, out.Notes)
	} else {
		var app *heureka.Application
		if app, err = c.application(ctx, o.App); err == nil {
			c.withLiveRenewals(ctx, app.Name, app.Instances, out.Notes)
			ins = app.Instances
		}
	}
	if err != nil {
		return err
	}
	views := make([]View, 0, len(ins))
	for _, in := range ins {
		if o.Status == "" || in.Status == o.Status {
			views = append(views, ViewOf(in))
		}
	}
	slices.SortFunc(views, func(a, b View) int { return strings.Compare(a.ID, b.ID) })
	if out.JSON {
		return writeJSON(out.W, views)
	}
	return instancesTable(out.W, views, time.Now())
}

// instancesTable writes views as `heureka instances` shows them, with a
// STATE column (the role state) when any has one.
func instancesTable(w io.Writer, views []View, now time.Time) error {
	state := slices.ContainsFunc(views, func(v View) bool { return v.RoleState != "" })
	tw := newTable(w)
	fmt.Fprint(tw, "ID\tSTATUS\tRACK\tDISK\tBLOCKS\tVERSION\tLAST RENEWAL")
	if state {
		fmt.Fprint(tw, "\tSTATE")
	}
	fmt.Fprintln(tw)
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", cleanCell(v.ID), v.statusCell(), cleanCell(dash(v.Rack)),
			v.diskCell(), v.blocksCell(), cleanCell(dash(v.Version)), ago(now, v.renewalMs()))
		if state {
			fmt.Fprintf(tw, "\t%s", cleanCell(dash(v.RoleState)))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// Show shows one instance, found by its ID alone: addresses, status and
// override, role state, lease, HDFS metadata and all other metadata.
func Show(ctx context.Context, c *Conn, out Output, id string) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	in, err := c.instanceByID(ctx, id)
	if err != nil {
		return err
	}
	c.withLiveRenewals(ctx, in.App, []*heureka.Instance{in}, out.Notes)
	v := ViewOf(in)
	if out.JSON {
		return writeJSON(out.W, v)
	}
	return showTable(out.W, v, time.Now())
}

func showTable(w io.Writer, v View, now time.Time) error {
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format(time.RFC3339) + " (" + ago(now, t.UnixMilli()) + ")"
	}
	tw := newTable(w)
	row := func(k, val string) { fmt.Fprintf(tw, "%s\t%s\n", k, cleanCell(val)) }
	row("app", v.App)
	row("id", v.ID)
	row("host", v.HostName+" ("+v.IPAddr+")")
	st := string(v.Status)
	if v.OverriddenStatus != "" {
		st += " (override set by an operator; `heureka status clear " + v.ID + "` removes it)"
	}
	row("status", st)
	if v.Port != 0 || v.SecurePort != 0 {
		row("ports", fmt.Sprintf("%d, secure %d", v.Port, v.SecurePort))
	}
	row("vip", dash(v.VIPAddress))
	row("rack", dash(v.Rack))
	if v.DiskTotal > 0 {
		row("disk", fmt.Sprintf("%s used of %s (%s)", bytesText(v.DiskUsed), bytesText(v.DiskTotal), v.diskCell()))
	}
	row("blocks", v.blocksCell())
	row("version", dash(v.Version))
	if v.RoleState != "" {
		lead := ""
		if v.Lead {
			lead = " (leads its cluster)"
		}
		row("role state", v.RoleState+lead)
	}
	if v.HAState != "" && v.HAState != v.RoleState {
		row("ha state", v.HAState)
	}
	if v.AdminState != "" {
		row("admin state", v.AdminState)
	}
	row("registered", when(v.RegisteredAt))
	row("last renewal", when(v.LastRenewal))
	row("last change", when(v.LastUpdated))
	row("lease", fmt.Sprintf("renew every %ds, expires %ds after the last renewal", v.RenewalInterval, v.LeaseDuration))
	if v.MetadataProblem != "" {
		row("metadata problem", v.MetadataProblem)
	}
	for k, val := range v.Metadata.All() {
		row("metadata."+k, val)
	}
	return tw.Flush()
}

// withLiveRenewals puts the live renewal times into ins, or says on notes
// that the times shown are the registration's.
func (c *Conn) withLiveRenewals(ctx context.Context, app string, ins []*heureka.Instance, notes io.Writer) {
	live, err := c.client.Renewals(ctx, app)
	if err != nil {
		fmt.Fprintln(notes, "heureka: note: renewal times are as of the last registration (this server does not show live ones to this client)")
		return
	}
	for _, in := range ins {
		if ms, ok := live[in.ID]; ok && ms > in.Lease.LastRenewalTimestamp {
			in.Lease.LastRenewalTimestamp = ms
		}
	}
}

// maxLiveReads is how many instances instancesOn refreshes with one
// single-instance read each; beyond that one read of the application's
// renewals is cheaper.
const maxLiveReads = 32

// instancesOn returns app's instances on hosts (host name in any case, or
// IP address), by client.OnHosts: a heureka server answers from its host
// index, which costs the answer; a server without it (plain Eureka) is
// read whole. Renewal times are live when the server shows them. None
// found is a *NotFoundError.
func (c *Conn) instancesOn(ctx context.Context, app string, hosts []string, notes io.Writer) ([]*heureka.Instance, error) {
	app = strings.ToUpper(app)
	found, scanned, err := c.client.OnHosts(ctx, hosts, app)
	switch {
	case err != nil && scanned:
		return nil, c.Explain(err, fmt.Sprintf("application %q", app), noInstances(app))
	case err != nil:
		return nil, c.Explain(err, fmt.Sprintf("look up %d hosts in %q", len(hosts), app))
	case scanned || len(found) > maxLiveReads:
		c.withLiveRenewals(ctx, app, found, notes)
	default:
		for i, in := range found {
			if live, err := c.client.Instance(ctx, in.App, in.ID); err == nil {
				found[i] = live
			}
		}
	}
	if len(found) == 0 {
		return nil, &NotFoundError{fmt.Sprintf("application %q has no instances on %s; list them all with `heureka instances %s`",
			app, strings.Join(hosts, ", "), strings.ToLower(app))}
	}
	return found, nil
}
