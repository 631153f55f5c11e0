package client

import (
	"slices"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
)

// Snapshot is an immutable view of the registry as a Cache last saw it:
// applications sorted by name, each application's instances sorted by ID.
// Nothing reachable from a Snapshot is ever modified, by the cache or by
// its readers: callers must not modify the slices and instances it
// returns (copy with slices.Clone or Instance.Clone first).
type Snapshot struct {
	seq  uint64
	time time.Time
	apps []*heureka.Application
	n    int
}

var emptySnapshot = &Snapshot{}

// newSnapshot sorts apps by name (instances must already be sorted by ID)
// and leaves out empty applications.
func newSnapshot(seq uint64, at time.Time, apps []*heureka.Application) *Snapshot {
	s := &Snapshot{seq: seq, time: at, apps: make([]*heureka.Application, 0, len(apps))}
	for _, a := range apps {
		if len(a.Instances) > 0 {
			s.apps = append(s.apps, a)
			s.n += len(a.Instances)
		}
	}
	slices.SortFunc(s.apps, func(x, y *heureka.Application) int { return strings.Compare(x.Name, y.Name) })
	return s
}

// Seq numbers the snapshots one Cache publishes: it grows by one with every
// change. A loaded or empty starting view has a small Seq; it says nothing
// about any server's version.
func (s *Snapshot) Seq() uint64 { return s.seq }

// Time is when the snapshot was published.
func (s *Snapshot) Time() time.Time { return s.time }

// Apps returns every application, sorted by name. The slice is shared.
func (s *Snapshot) Apps() []*heureka.Application { return s.apps }

// Len is the number of instances.
func (s *Snapshot) Len() int { return s.n }

// App returns the application named name (case-insensitive), or nil.
func (s *Snapshot) App(name string) *heureka.Application {
	name = strings.ToUpper(name) // no allocation when name is already upper-case
	i, ok := slices.BinarySearchFunc(s.apps, name, func(a *heureka.Application, n string) int { return strings.Compare(a.Name, n) })
	if !ok {
		return nil
	}
	return s.apps[i]
}

// Instances returns app's instances, whatever their status, sorted by ID;
// nil when the application is unknown. The slice is shared: filter it with
// Select, which copies.
func (s *Snapshot) Instances(app string) []*heureka.Instance {
	if a := s.App(app); a != nil {
		return a.Instances
	}
	return nil
}

// Instance returns one instance of app.
func (s *Snapshot) Instance(app, id string) (*heureka.Instance, bool) {
	a := s.App(app)
	if a == nil {
		return nil, false
	}
	i, ok := slices.BinarySearchFunc(a.Instances, id, func(in *heureka.Instance, id string) int { return strings.Compare(in.ID, id) })
	if !ok {
		return nil, false
	}
	return a.Instances[i], true
}

// Applications returns the snapshot as a Eureka listing (versions__delta 1,
// apps__hashcode computed), ready for eureka.EncodeApplications.
func (s *Snapshot) Applications() *heureka.Applications {
	return &heureka.Applications{VersionDelta: 1, HashCode: heureka.ReconcileHashCode(s.apps), Apps: s.apps}
}

// Change is one instance's difference between two snapshots. Old is nil
// for ADDED, New is nil for DELETED.
type Change struct {
	Action  heureka.ActionType
	App, ID string
	Old     *heureka.Instance
	New     *heureka.Instance
}

// Diff lists what changed from old to new, by application then ID. An
// instance counts as MODIFIED when any field other than its lease
// timestamps and delta action type differs (heartbeats move lease
// timestamps on Eureka servers; they are not changes). A nil snapshot is
// empty.
func Diff(old, new *Snapshot) []Change {
	if old == nil {
		old = emptySnapshot
	}
	if new == nil {
		new = emptySnapshot
	}
	var out []Change
	i, j := 0, 0
	for i < len(old.apps) || j < len(new.apps) {
		switch {
		case j == len(new.apps) || (i < len(old.apps) && old.apps[i].Name < new.apps[j].Name):
			out = diffApp(out, old.apps[i].Name, old.apps[i].Instances, nil)
			i++
		case i == len(old.apps) || new.apps[j].Name < old.apps[i].Name:
			out = diffApp(out, new.apps[j].Name, nil, new.apps[j].Instances)
			j++
		default:
			if old.apps[i] != new.apps[j] {
				out = diffApp(out, new.apps[j].Name, old.apps[i].Instances, new.apps[j].Instances)
			}
			i++
			j++
		}
	}
	return out
}

// diffApp compares two ID-sorted instance lists.
func diffApp(out []Change, app string, old, new []*heureka.Instance) []Change {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || (i < len(old) && old[i].ID < new[j].ID):
			out = append(out, Change{Action: heureka.ActionDeleted, App: app, ID: old[i].ID, Old: old[i]})
			i++
		case i == len(old) || new[j].ID < old[i].ID:
			out = append(out, Change{Action: heureka.ActionAdded, App: app, ID: new[j].ID, New: new[j]})
			j++
		default:
			if !sameInstance(old[i], new[j]) {
				out = append(out, Change{Action: heureka.ActionModified, App: app, ID: new[j].ID, Old: old[i], New: new[j]})
			}
			i++
			j++
		}
	}
	return out
}

// sameInstance reports whether a and b describe the same state, leaving out
// lease timestamps (a heartbeat moves them on Eureka servers, and a watch
// event does not carry them) and the delta action type.
func sameInstance(a, b *heureka.Instance) bool {
	if a == b {
		return true
	}
	return a.ID == b.ID && a.App == b.App && a.AppGroupName == b.AppGroupName &&
		a.HostName == b.HostName && a.IPAddr == b.IPAddr && a.SID == b.SID &&
		a.Status == b.Status && a.OverriddenStatus == b.OverriddenStatus &&
		a.Port == b.Port && a.SecurePort == b.SecurePort && a.CountryID == b.CountryID &&
		a.DataCenter.Name == b.DataCenter.Name && a.DataCenter.Metadata.Equal(b.DataCenter.Metadata) &&
		a.Lease.RenewalIntervalSecs == b.Lease.RenewalIntervalSecs && a.Lease.DurationSecs == b.Lease.DurationSecs &&
		a.Metadata.Equal(b.Metadata) &&
		a.HomePageURL == b.HomePageURL && a.StatusPageURL == b.StatusPageURL &&
		a.HealthCheckURL == b.HealthCheckURL && a.SecureHealthCheckURL == b.SecureHealthCheckURL &&
		a.VIPAddress == b.VIPAddress && a.SecureVIPAddress == b.SecureVIPAddress && a.ASGName == b.ASGName &&
		a.IsCoordinatingDiscoveryServer == b.IsCoordinatingDiscoveryServer &&
		a.LastUpdatedTimestamp == b.LastUpdatedTimestamp && a.LastDirtyTimestamp == b.LastDirtyTimestamp
}
