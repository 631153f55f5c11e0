package alert

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/roles"
)

// The cluster alerts: a cluster of a role with a lead (package roles) whose
// application has members UP and none in a lead state fires its role's
// Alert (HeurekaNoActiveResourceManager, HeurekaNoActiveHBaseMaster,
// HeurekaZooKeeperNoLeader, HeurekaKafkaNoController), with labels
// alertname, app, cluster and severity critical, and resolves when a
// member leads again, when no member is UP (each DOWN member has its
// HeurekaInstanceDown), or when the application is gone. The forwarder
// keeps every member of such an application (state.Members), from the
// registry's listing and then from each event, and judges the cluster
// after each change of one of them.

// clusterRole returns the role and cluster of app when its clusters have
// an alert.
func clusterRole(app string) (roles.Role, string, bool) {
	r, cluster, ok := roles.Parse(app)
	return r, cluster, ok && r.Alert != ""
}

// isClusterAlert reports whether name is a role's cluster alert.
func isClusterAlert(name string) bool {
	_, ok := roles.ByAlert(name)
	return ok
}

// memberLocked applies an instance event to its cluster's members and
// judges the cluster; it reports whether an alert changed state.
func (f *Forwarder) memberLocked(e heureka.Event, t time.Time) bool {
	r, cluster, ok := clusterRole(e.App)
	if !ok {
		return false
	}
	app := strings.ToUpper(e.App)
	ms := f.state.Members[app]
	if ms == nil {
		ms = map[string]roles.Member{}
		f.state.Members[app] = ms
	}
	switch e.Type {
	case heureka.EventRegistered, heureka.EventMetadataChanged:
		ms[e.ID] = r.MemberOf(e.Status, e.Metadata)
	case heureka.EventStatusChanged:
		m := ms[e.ID]
		m.Status = e.Status
		ms[e.ID] = m
	case heureka.EventCancelled, heureka.EventExpired:
		delete(ms, e.ID)
	default:
		return false
	}
	if len(ms) == 0 {
		delete(f.state.Members, app)
	}
	return f.judgeLocked(r, app, cluster, t)
}

// judgeLocked fires or resolves app's cluster alert from its members.
func (f *Forwarder) judgeLocked(r roles.Role, app, cluster string, t time.Time) bool {
	ms := f.state.Members[app]
	var n roles.Count
	for _, m := range ms {
		r.Add(&n, m)
	}
	if !n.Unled() {
		return f.resolveLocked(r.Alert, app, "", t)
	}
	var up []string
	for _, id := range slices.Sorted(maps.Keys(ms)) {
		if m := ms[id]; m.Status == heureka.StatusUp {
			up = append(up, id+" ("+dash(m.State)+")")
		}
	}
	if len(up) > 8 {
		up = append(up[:8], fmt.Sprintf("and %d more", len(up)-8))
	}
	url := f.generatorURL()
	return f.fireLocked(&Alert{
		Labels: map[string]string{"alertname": r.Alert, "app": app, "cluster": cluster, "severity": "critical"},
		Annotations: map[string]string{
			"summary": fmt.Sprintf("%s cluster %s has %s", r.System, cluster, r.NoLead),
			"description": fmt.Sprintf("%d %s of %s are UP and none is %s: %s. `heureka instances %s` shows them.",
				n.Up, r.Members, app, r.Lead(), strings.Join(up, ", "), strings.ToLower(app)),
			"dashboard": url,
		},
		StartsAt:     t.UTC(),
		GeneratorURL: url,
	})
}

// membersOf returns the members of every application of apps whose
// clusters have an alert, by application and ID.
func membersOf(apps *heureka.Applications, wanted func(string) bool) map[string]map[string]roles.Member {
	out := map[string]map[string]roles.Member{}
	for _, a := range apps.Apps {
		r, _, ok := clusterRole(a.Name)
		if !ok || !wanted(a.Name) || len(a.Instances) == 0 {
			continue
		}
		ms := map[string]roles.Member{}
		for _, in := range a.Instances {
			ms[in.ID] = r.MemberOf(in.Status, in.Metadata)
		}
		out[strings.ToUpper(a.Name)] = ms
	}
	return out
}

// reconcileClustersLocked judges every cluster again from members, read
// from the registry, and resolves the cluster alerts of applications
// that are gone.
func (f *Forwarder) reconcileClustersLocked(members map[string]map[string]roles.Member, now time.Time) {
	f.state.Members = members
	held := map[string]string{} // key -> alert name, app
	for k, a := range f.state.Firing {
		held[k] = a.Labels["alertname"] + "\x00" + a.Labels["app"]
	}
	for k, p := range f.state.Pending {
		held[k] = p.Alert.Labels["alertname"] + "\x00" + p.Alert.Labels["app"]
	}
	for _, k := range slices.Sorted(maps.Keys(held)) {
		name, app, _ := strings.Cut(held[k], "\x00")
		if _, ok := members[app]; isClusterAlert(name) && !ok {
			f.resolveLocked(name, app, "", now)
		}
	}
	for _, app := range slices.Sorted(maps.Keys(members)) {
		r, cluster, _ := clusterRole(app)
		f.judgeLocked(r, app, cluster, now)
	}
}

// clusterAlerts names every role's cluster alert.
func clusterAlerts() []string {
	var out []string
	for _, r := range roles.All() {
		if r.Alert != "" {
			out = append(out, r.Alert)
		}
	}
	return out
}
