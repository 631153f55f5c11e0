package client

import (
	"slices"

	"github.com/heureka-project/heureka"
)

// Filter selects instances. Readers see every instance whatever its status;
// callers pick what they want with Select and these filters.
type Filter func(*heureka.Instance) bool

// MetaVersion is the metadata key HasVersion reads; heureka's agents
// publish the daemon's software version under it.
const MetaVersion = "version"

// Select returns the instances that pass every filter, in their order, as
// a new slice (nil when none pass). With no filters it returns a copy.
func Select(ins []*heureka.Instance, filters ...Filter) []*heureka.Instance {
	var out []*heureka.Instance
next:
	for _, in := range ins {
		for _, f := range filters {
			if !f(in) {
				continue next
			}
		}
		out = append(out, in)
	}
	return out
}

// Up passes instances whose status is UP: the ones to send traffic to.
func Up() Filter { return HasStatus(heureka.StatusUp) }

// HasStatus passes instances with any of the given statuses.
func HasStatus(statuses ...heureka.Status) Filter {
	statuses = slices.Clone(statuses)
	return func(in *heureka.Instance) bool { return slices.Contains(statuses, in.Status) }
}

// HasMetadata passes instances whose metadata maps key to value.
func HasMetadata(key, value string) Filter {
	return func(in *heureka.Instance) bool {
		v, ok := in.Metadata.Lookup(key)
		return ok && v == value
	}
}

// HasVersion passes instances whose "version" metadata is one of versions.
func HasVersion(versions ...string) Filter {
	versions = slices.Clone(versions)
	return func(in *heureka.Instance) bool {
		v, ok := in.Metadata.Lookup(MetaVersion)
		return ok && slices.Contains(versions, v)
	}
}
