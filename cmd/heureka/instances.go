package main

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
	"github.com/heureka-project/heureka/hdfs"
)

// appSummary is one line of `heureka apps`.
type appSummary struct {
	App       string                 `json:"app"`
	Instances int                    `json:"instances"`
	Statuses  map[heureka.Status]int `json:"statuses"`
}

func runApps(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	fs := newFlagSet("apps", "apps [flags]", `
Lists the registered applications with their number of instances by status.`, stderr)
	o.addFlags(fs, true)
	if err := o.parseNone(fs, args); err != nil {
		return err
	}
	rc, ctx, done, err := o.session(ctx)
	if err != nil {
		return err
	}
	defer done()
	apps, err := rc.client.Apps(ctx)
	if err != nil {
		return rc.explain(err, "list applications")
	}
	out := make([]appSummary, 0, len(apps.Apps))
	for _, a := range apps.Apps {
		s := appSummary{App: a.Name, Instances: len(a.Instances), Statuses: map[heureka.Status]int{}}
		for _, in := range a.Instances {
			s.Statuses[in.Status]++
		}
		out = append(out, s)
	}
	if o.json() {
		return writeJSON(stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(stderr, "No applications are registered.")
		return nil
	}
	tw := newTable(stdout)
	fmt.Fprintln(tw, "APP\tINSTANCES\tUP\tDOWN\tOUT_OF_SERVICE\tSTARTING\tUNKNOWN")
	for _, s := range out {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", cleanCell(s.App), s.Instances,
			s.Statuses[heureka.StatusUp], s.Statuses[heureka.StatusDown], s.Statuses[heureka.StatusOutOfService],
			s.Statuses[heureka.StatusStarting], s.Statuses[heureka.StatusUnknown])
	}
	return tw.Flush()
}

// instanceView is an instance as the operator commands show it: the
// Eureka fields that matter and the HDFS metadata, read.
type instanceView struct {
	App              string           `json:"app"`
	ID               string           `json:"id"`
	HostName         string           `json:"hostName"`
	IPAddr           string           `json:"ipAddr"`
	Status           heureka.Status   `json:"status"`
	OverriddenStatus heureka.Status   `json:"overriddenStatus,omitempty"`
	Port             int              `json:"port,omitempty"`
	SecurePort       int              `json:"securePort,omitempty"`
	VIPAddress       string           `json:"vipAddress,omitempty"`
	Rack             string           `json:"rack,omitempty"`
	DiskUsed         int64            `json:"diskUsed,omitempty"`
	DiskTotal        int64            `json:"diskTotal,omitempty"`
	DiskPercent      *float64         `json:"diskPercent,omitempty"`
	Blocks           int64            `json:"blocks,omitempty"`
	Version          string           `json:"version,omitempty"`
	HAState          string           `json:"haState,omitempty"`
	AdminState       string           `json:"adminState,omitempty"`
	RegisteredAt     *time.Time       `json:"registeredAt,omitempty"`
	LastRenewal      *time.Time       `json:"lastRenewal,omitempty"`
	LastUpdated      *time.Time       `json:"lastUpdated,omitempty"`
	RenewalInterval  int              `json:"renewalIntervalSecs,omitempty"`
	LeaseDuration    int              `json:"leaseDurationSecs,omitempty"`
	MetadataProblem  string           `json:"metadataProblem,omitempty"`
	Metadata         heureka.Metadata `json:"metadata"` // {} when empty
}

func msTime(ms int64) *time.Time {
	if ms <= 0 {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}

func viewOf(in *heureka.Instance) instanceView {
	info, err := hdfs.ReadNodeInfo(in.Metadata)
	v := instanceView{
		App: in.App, ID: in.ID, HostName: in.HostName, IPAddr: in.IPAddr,
		Status: in.Status, VIPAddress: in.VIPAddress,
		Rack: info.Rack, DiskUsed: info.DiskUsed, DiskTotal: info.DiskTotal, Blocks: info.BlockCount,
		Version: info.Version, HAState: string(info.HAState), AdminState: info.Status,
		RegisteredAt:    msTime(in.Lease.RegistrationTimestamp),
		LastRenewal:     msTime(in.Lease.LastRenewalTimestamp),
		LastUpdated:     msTime(in.LastUpdatedTimestamp),
		RenewalInterval: in.Lease.RenewalIntervalSecs,
		LeaseDuration:   in.Lease.DurationSecs,
		Metadata:        in.Metadata,
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

func (v instanceView) diskCell() string {
	if v.DiskPercent == nil {
		return "-"
	}
	return strconv.FormatFloat(*v.DiskPercent, 'f', 1, 64) + "%"
}

func (v instanceView) blocksCell() string {
	if v.Blocks == 0 {
		return "-"
	}
	return strconv.FormatInt(v.Blocks, 10)
}

func (v instanceView) statusCell() string {
	if v.OverriddenStatus != "" {
		return string(v.Status) + " (override)"
	}
	return string(v.Status)
}

func renewalMs(v instanceView) int64 {
	if v.LastRenewal == nil {
		return 0
	}
	return v.LastRenewal.UnixMilli()
}

func runInstances(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	fs := newFlagSet("instances", "instances APP [flags]", `
Lists an application's instances: ID, status, rack, disk fullness, block
count, Hadoop version and last renewal. APP is case-insensitive, e.g.
hdfs-datanode.prod. With --host, a heureka server looks the hosts up
itself, so the answer costs the hosts asked for, not the application.`, stderr)
	o.addFlags(fs, true)
	status := fs.String("status", "", "show only instances with this `STATUS` (UP, DOWN, OUT_OF_SERVICE, STARTING, UNKNOWN)")
	hostList := fs.String("host", "", "show only instances on these `hosts` (names or IP addresses, comma-separated)")
	name, err := o.parseOne(fs, args, "instances: want exactly one application name, e.g. `heureka instances hdfs-datanode.prod` (see `heureka apps`)")
	if err != nil {
		return err
	}
	var want heureka.Status
	if *status != "" {
		if want, err = heureka.ParseStatus(*status); err != nil {
			return &usageError{"--status: " + err.Error()}
		}
	}
	hosts, err := hostsFlag(*hostList)
	if err != nil {
		return err
	}
	rc, ctx, done, err := o.session(ctx)
	if err != nil {
		return err
	}
	defer done()
	var ins []*heureka.Instance
	if hosts != nil {
		ins, err = rc.instancesOn(ctx, name, hosts, stderr)
	} else {
		var app *heureka.Application
		if app, err = rc.application(ctx, name); err == nil {
			rc.withLiveRenewals(ctx, app.Name, app.Instances, stderr)
			ins = app.Instances
		}
	}
	if err != nil {
		return err
	}
	views := make([]instanceView, 0, len(ins))
	for _, in := range ins {
		if want == "" || in.Status == want {
			views = append(views, viewOf(in))
		}
	}
	slices.SortFunc(views, func(a, b instanceView) int { return strings.Compare(a.ID, b.ID) })
	if o.json() {
		return writeJSON(stdout, views)
	}
	now := time.Now()
	// NameNodes have an HA state; show it when there is one.
	ha := slices.ContainsFunc(views, func(v instanceView) bool { return v.HAState != "" })
	tw := newTable(stdout)
	fmt.Fprint(tw, "ID\tSTATUS\tRACK\tDISK\tBLOCKS\tVERSION\tLAST RENEWAL")
	if ha {
		fmt.Fprint(tw, "\tHA")
	}
	fmt.Fprintln(tw)
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", cleanCell(v.ID), v.statusCell(), cleanCell(dash(v.Rack)),
			v.diskCell(), v.blocksCell(), cleanCell(dash(v.Version)), ago(now, renewalMs(v)))
		if ha {
			fmt.Fprintf(tw, "\t%s", cleanCell(dash(v.HAState)))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	fs := newFlagSet("show", "show ID [flags]", `
Shows one instance, found by its ID alone: addresses, status and override,
lease, HDFS metadata (rack, disk, blocks, version, HA state) and all other
metadata.`, stderr)
	o.addFlags(fs, true)
	id, err := o.parseOne(fs, args, "show: want exactly one instance ID (see `heureka instances APP`)")
	if err != nil {
		return err
	}
	var v instanceView
	err = o.withInstance(ctx, id, func(ctx context.Context, rc *registryConn, in *heureka.Instance) error {
		rc.withLiveRenewals(ctx, in.App, []*heureka.Instance{in}, stderr)
		v = viewOf(in)
		return nil
	})
	if err != nil {
		return err
	}
	if o.json() {
		return writeJSON(stdout, v)
	}
	now := time.Now()
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format(time.RFC3339) + " (" + ago(now, t.UnixMilli()) + ")"
	}
	tw := newTable(stdout)
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
	if v.HAState != "" {
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

// bytesText renders a size in binary units.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[i-1])
}
