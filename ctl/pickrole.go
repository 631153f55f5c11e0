package ctl

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/roles"
)

// PickedMember is one member of a role's cluster Pick chose.
type PickedMember struct {
	ID      string `json:"id"`
	Host    string `json:"host"`
	Address string `json:"address"` // host:port, the registered port
	Rack    string `json:"rack"`
	State   string `json:"state,omitempty"` // its role state
	Lead    bool   `json:"lead,omitempty"`  // it leads its cluster
}

// MemberPick is `heureka pick --role ROLE -o json`.
type MemberPick struct {
	App       string         `json:"app"`
	Requested int            `json:"requested"` // 0: every member
	Members   []PickedMember `json:"members"`
	Short     int            `json:"short"`
	Problem   string         `json:"problem,omitempty"`
}

func (o PickOptions) validateRole() error {
	switch {
	case !heureka.ValidRoleName(strings.ToLower(o.Role)):
		return heureka.InvalidConfig("Role", o.Role, "is not a role name such as yarn-resourcemanager or kafka-broker")
	case strings.EqualFold(o.Role, hdfs.RoleName(hdfs.RoleDataNode)):
		return heureka.InvalidConfig("Role", o.Role, "DataNodes are placed: leave --role out, and give --writer or --rack")
	case o.Writer != "" || o.Rack != "":
		return heureka.InvalidConfig("Writer", o.Writer+o.Rack, "a writer and its rack place DataNodes; a role's members are chosen lead first")
	case len(o.State) > 63:
		return heureka.InvalidConfig("State", o.State, "is longer than any role state")
	}
	return heureka.Positive(heureka.NamedDuration{Field: "ProbeTimeout", Value: o.ProbeTimeout})
}

// pickMembers prints the members of o.Role's cluster that are UP, not
// excluded and in o.State when given: the lead first, then one from each
// rack in turn, paused (probe_state=hung) ones last; at most o.N, every
// one with 0. With o.Probe each is dialled first and skipped if it does
// not answer. None, or fewer than o.N, is a *NotFoundError that says what
// the application holds.
func pickMembers(ctx context.Context, c *Conn, out Output, o PickOptions) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	app := heureka.RoleApp(o.Role, o.Cluster)
	a, err := c.application(ctx, app)
	if err != nil {
		return err
	}
	role, _ := roles.Lookup(o.Role) // a role of another program: no lead, members all alike
	state := strings.ToLower(strings.TrimSpace(o.State))
	skip := map[string]bool{}
	for _, h := range o.Exclude {
		skip[strings.ToLower(h)] = true
	}
	var cands []*heureka.Instance
	left := 0
	for _, in := range a.Instances {
		switch {
		case in.Status != heureka.StatusUp || (state != "" && roles.State(in.Metadata) != state):
		case skip[strings.ToLower(in.ID)] || skip[in.IPAddr] || skip[strings.ToLower(in.HostName)]:
			left++
		default:
			cands = append(cands, in)
		}
	}
	res := MemberPick{App: app, Requested: o.N, Members: []PickedMember{}}
	var failed []string
	for _, in := range memberOrder(role, cands) {
		if o.N > 0 && len(res.Members) == o.N {
			break
		}
		m := pickedMember(role, in)
		if o.Probe {
			d := net.Dialer{Timeout: o.ProbeTimeout}
			conn, err := d.DialContext(ctx, "tcp", m.Address)
			if err != nil {
				failed = append(failed, m.ID)
				continue
			}
			conn.Close()
		}
		res.Members = append(res.Members, m)
	}
	if o.N > 0 {
		res.Short = o.N - len(res.Members)
	}
	if len(res.Members) == 0 || res.Short > 0 {
		res.Problem = memberShortfall(a, state, left, failed)
	}
	if err := printMembers(out, res, o.List); err != nil {
		return err
	}
	if res.Problem == "" {
		return nil
	}
	if len(res.Members) == 0 {
		return &NotFoundError{fmt.Sprintf("pick: no member of %s to choose: %s", app, res.Problem)}
	}
	return &NotFoundError{fmt.Sprintf("pick: only %d of %d members of %s: %s", len(res.Members), o.N, app, res.Problem)}
}

// memberOrder orders a role's candidates: the lead first, then the
// others, then paused ones (probe_state=hung); within each of these, the
// next one is always from a rack chosen least so far (by ID among ties),
// so that the first few spread over racks.
func memberOrder(role roles.Role, ins []*heureka.Instance) []*heureka.Instance {
	tier := func(in *heureka.Instance) int {
		t := 1
		if role.IsLead(roles.State(in.Metadata)) {
			t = 0
		}
		if in.Metadata.Get(heureka.MetaProbeState) == heureka.ProbeStateHung {
			t += 2
		}
		return t
	}
	rack := func(in *heureka.Instance) string { return heureka.NormalizeRack(in.Metadata.Get(heureka.MetaRack)) }
	ins = slices.Clone(ins)
	slices.SortFunc(ins, func(a, b *heureka.Instance) int {
		return cmp.Or(cmp.Compare(tier(a), tier(b)), strings.Compare(a.ID, b.ID))
	})
	used := map[string]int{}
	out := make([]*heureka.Instance, 0, len(ins))
	for len(ins) > 0 {
		// The first of the lowest tier left, from a rack used least.
		best := 0
		for i, in := range ins[1:] {
			if tier(in) != tier(ins[0]) {
				break
			}
			if used[rack(in)] < used[rack(ins[best])] {
				best = i + 1
			}
		}
		used[rack(ins[best])]++
		out = append(out, ins[best])
		ins = slices.Delete(ins, best, best+1)
	}
	return out
}

func pickedMember(role roles.Role, in *heureka.Instance) PickedMember {
	host := in.HostName
	if host == "" {
		host = in.IPAddr
	}
	st := roles.State(in.Metadata)
	return PickedMember{ID: in.ID, Host: host, Address: net.JoinHostPort(host, strconv.Itoa(in.Port.Number)),
		Rack: heureka.NormalizeRack(in.Metadata.Get(heureka.MetaRack)), State: st, Lead: role.IsLead(st)}
}

// memberShortfall says why too few members could be chosen: how the
// application's members stand.
func memberShortfall(a *heureka.Application, state string, left int, failed []string) string {
	if len(a.Instances) == 0 {
		return "it has no members"
	}
	var parts []string
	for _, in := range a.Instances {
		st := roles.State(in.Metadata)
		parts = append(parts, in.ID+" "+string(in.Status)+" "+dash(st))
	}
	slices.Sort(parts)
	if len(parts) > 10 {
		parts = append(parts[:10], fmt.Sprintf("and %d more", len(parts)-10))
	}
	var why []string
	if state != "" {
		why = append(why, "wanted UP members in role state "+state)
	} else {
		why = append(why, "wanted UP members")
	}
	if left > 0 {
		why = append(why, fmt.Sprintf("%d left out with --exclude", left))
	}
	if len(failed) > 0 {
		why = append(why, "not answering the probe: "+strings.Join(failed, ", "))
	}
	return strings.Join(why, "; ") + " (members: " + strings.Join(parts, ", ") + ")"
}

// printMembers prints the members chosen: as JSON, as one line of
// addresses, or as a table when there are any.
func printMembers(out Output, res MemberPick, list bool) error {
	switch {
	case out.JSON:
		return writeJSON(out.W, res)
	case len(res.Members) == 0:
		return nil
	case list:
		addrs := make([]string, len(res.Members))
		for i, m := range res.Members {
			addrs[i] = cleanCell(m.Address)
		}
		_, err := fmt.Fprintln(out.W, strings.Join(addrs, ","))
		return err
	}
	tw := newTable(out.W)
	fmt.Fprintln(tw, "ID\tHOST\tADDRESS\tRACK\tSTATE")
	for _, m := range res.Members {
		st := dash(m.State)
		if m.Lead {
			st += " (lead)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cleanCell(m.ID), cleanCell(m.Host), cleanCell(m.Address), cleanCell(m.Rack), cleanCell(st))
	}
	return tw.Flush()
}
