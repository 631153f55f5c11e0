package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/server/servertest"
)

func pickMembersJSON(t *testing.T, c *Conn, o PickOptions) (MemberPick, error) {
	t.Helper()
	var out output
	err := Pick(context.Background(), c, out.out(true), o)
	var res MemberPick
	if jerr := json.Unmarshal(out.w.Bytes(), &res); jerr != nil {
		t.Fatalf("pick printed no JSON (%v): %s %s", err, out.w.String(), out.notes.String())
	}
	return res, err
}

func ids(ms []PickedMember) string {
	var out []string
	for _, m := range ms {
		out = append(out, strings.TrimPrefix(m.ID, "prod-"))
	}
	return strings.Join(out, ",")
}

// TestPickMembers: a role's members, the lead first, then one rack after
// another, a paused one last, DOWN and excluded ones never; --state keeps
// one role state; a list prints addresses for a client's configuration;
// none to choose is a NotFoundError that says how the members stand.
func TestPickMembers(t *testing.T) {
	s := servertest.Open(t, nil)
	for _, in := range []*heureka.Instance{
		member("kafka-broker", "b1", "/r1", "broker", ""),
		member("kafka-broker", "b2", "/r1", "broker", ""),
		member("kafka-broker", "b3", "/r2", "controller", ""),
		member("kafka-broker", "b4", "/r2", "broker", "", heureka.MetaProbeState, heureka.ProbeStateHung),
		member("kafka-broker", "b5", "/r3", "broker", heureka.StatusDown),
		member("kafka-broker", "b6", "/r3", "broker", ""),
		member("yarn-resourcemanager", "rm1", "/r1", "standby", ""),
		member("yarn-resourcemanager", "rm2", "/r2", "active", heureka.StatusDown),
	} {
		servertest.Register(t, s, in)
	}
	c := openConn(t, servertest.URL(s))
	o := DefaultPickOptions()
	o.Cluster, o.Role = "prod", "kafka-broker"
	res, err := pickMembersJSON(t, c, o)
	// b3 leads; then r1's best, r3's, r2's paused b4 last of its rack's turn.
	if err != nil || ids(res.Members) != "b3-r2,b1-r1,b6-r3,b2-r1,b4-r2" || !res.Members[0].Lead || res.Members[0].State != "controller" {
		t.Fatalf("every broker: %v %+v", err, res)
	}
	if res.Members[1].Address != "b1:2181" || res.Members[1].Rack != "/r1" {
		t.Errorf("b1: %+v", res.Members[1])
	}

	o.N, o.Exclude = 3, []string{"b3"}
	var out output
	o.List = true
	if err := Pick(context.Background(), c, out.out(false), o); err != nil || out.w.String() != "b1:2181,b6:2181,b2:2181\n" {
		t.Errorf("a bootstrap list of 3, b3 excluded: %v %q", err, out.w.String())
	}

	// The active ResourceManager: it is DOWN, and the standby is not it.
	o = DefaultPickOptions()
	o.Cluster, o.Role, o.State = "prod", "yarn-resourcemanager", "active"
	out = output{}
	err = Pick(context.Background(), c, out.out(false), o)
	if _, ok := errors.AsType[*NotFoundError](err); !ok || !strings.Contains(err.Error(), "no member of yarn-resourcemanager.prod") ||
		!strings.Contains(err.Error(), "role state active") || !strings.Contains(err.Error(), "prod-rm2-r2 DOWN active") || out.w.Len() != 0 {
		t.Errorf("no active RM: %v, printed %q", err, out.w.String())
	}
	o.State = "STANDBY"
	out = output{}
	if err := Pick(context.Background(), c, out.out(false), o); err != nil || !strings.Contains(out.w.String(), "prod-rm1-r1") ||
		strings.Contains(out.w.String(), "(lead)") {
		t.Errorf("the standby: %v\n%s", err, out.w.String())
	}

	o = DefaultPickOptions()
	o.Cluster, o.Role, o.N = "prod", "kafka-broker", 9
	res, err = pickMembersJSON(t, c, o)
	if _, ok := errors.AsType[*NotFoundError](err); !ok || len(res.Members) != 5 || res.Short != 4 || !strings.Contains(err.Error(), "only 5 of 9") {
		t.Errorf("9 of 5 brokers: %v %+v", err, res)
	}
	o.Cluster = "nowhere"
	if err := Pick(context.Background(), c, (&output{}).out(false), o); err == nil {
		t.Error("a cluster with no brokers: no error")
	} else if _, ok := errors.AsType[*NotFoundError](err); !ok {
		t.Errorf("a cluster with no brokers: %v, want a NotFoundError", err)
	}
}

// TestPickMembersProbe: with Probe, a member whose registered port
// refuses is skipped.
func TestPickMembersProbe(t *testing.T) {
	s := servertest.Open(t, nil)
	for host, port := range map[string]int{"zk1": deadPort(t), "zk2": livePort(t)} {
		in := member("zookeeper", host, "/r1", map[string]string{"zk1": "leader", "zk2": "follower"}[host], "")
		in.HostName, in.Port.Number = "127.0.0.1", port
		in.ID = "prod-" + host + "-" + strconv.Itoa(port)
		servertest.Register(t, s, in)
	}
	c := openConn(t, servertest.URL(s))
	o := DefaultPickOptions()
	o.Cluster, o.Role, o.N, o.Probe, o.ProbeTimeout = "prod", "zookeeper", 1, true, 2*time.Second
	res, err := pickMembersJSON(t, c, o)
	if err != nil || len(res.Members) != 1 || res.Members[0].State != "follower" {
		t.Errorf("the leader's port refuses: %v %+v; want the follower", err, res)
	}
}

// TestPickOptionsForRoles: what cannot work with a role is refused,
// naming its field.
func TestPickOptionsForRoles(t *testing.T) {
	base := DefaultPickOptions()
	base.Cluster = "prod"
	for field, edit := range map[string]func(*PickOptions){
		"Role":   func(o *PickOptions) { o.Role = "hdfs-datanode" },
		"Writer": func(o *PickOptions) { o.Role, o.Writer = "zookeeper", "h1" },
		"State":  func(o *PickOptions) { o.State = "active" },
	} {
		o := base
		edit(&o)
		if ce, ok := errors.AsType[*heureka.ConfigError](o.Validate()); !ok || ce.Field != field {
			t.Errorf("%s: %v", field, o.Validate())
		}
	}
}
