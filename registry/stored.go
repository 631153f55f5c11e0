package registry

import (
	"strings"

	"github.com/heureka-project/heureka"
)

// The collector pays for every pointer word of every live object at every
// cycle, whatever it points at (docs/design.md). A heureka.Instance has 19:
// its strings and its two metadata blocks. At 100k instances they were most
// of a collection's work, and so most of what the collector charged each
// renewal. The registry therefore keeps each instance as a stored record
// with three: one block of its strings, and its two metadata blocks. It
// makes a heureka.Instance from one when a reader asks (load, instance);
// readers hold those only as long as they need them.

// A record's text is its strings back to back, in this order; ends[i] is
// where string i ends.
const (
	sID = iota
	sApp
	sAppGroupName
	sHostName
	sIPAddr
	sSID
	sDataCenter
	sHomePageURL
	sStatusPageURL
	sHealthCheckURL
	sSecureHealthCheckURL
	sVIPAddress
	sSecureVIPAddress
	sASGName
	nText
)

// textFields returns in's string fields in text order.
func textFields(in *heureka.Instance) [nText]*string {
	return [nText]*string{&in.ID, &in.App, &in.AppGroupName, &in.HostName, &in.IPAddr, &in.SID,
		&in.DataCenter.Name, &in.HomePageURL, &in.StatusPageURL, &in.HealthCheckURL,
		&in.SecureHealthCheckURL, &in.VIPAddress, &in.SecureVIPAddress, &in.ASGName}
}

// stored is an instance as the registry keeps it: immutable, with three
// pointer words. Statuses and the action are codes (see codes), the rest of
// the strings are in text.
type stored struct {
	text     string
	ends     [nText]uint32
	md, dcmd heureka.Metadata

	port, securePort heureka.Port
	countryID        int
	lease            heureka.LeaseInfo
	lastUpdated      int64
	lastDirty        int64
	status           code
	overridden       code
	action           code
	coordinating     bool
}

// code is a status or action type as an index into codes.
type code uint8

// codes are the values an instance's Status, OverriddenStatus and
// ActionType take once normalised; the constants, whose bytes are in the
// binary rather than on the heap.
var codes = [...]string{
	"",
	string(heureka.StatusUp), string(heureka.StatusDown), string(heureka.StatusStarting),
	string(heureka.StatusOutOfService), string(heureka.StatusUnknown),
	string(heureka.ActionAdded), string(heureka.ActionModified), string(heureka.ActionDeleted),
}

const codeUnknown code = 5

// codeOf returns s's code. The registry stores only normalised instances,
// whose statuses are the five of heureka.Statuses; any other value is read
// as Eureka's decoder reads it, as UNKNOWN.
func codeOf(s string) code {
	for i, c := range codes {
		if c == s {
			return code(i)
		}
	}
	return codeUnknown
}

func (c code) status() heureka.Status     { return heureka.Status(codes[c]) }
func (c code) action() heureka.ActionType { return heureka.ActionType(codes[c]) }

// store makes the record of in, sharing prev's text when in's strings are
// prev's (a renewal's registration, a status or metadata change, a
// deletion), and points in's strings at the record's text so that nothing
// made from in keeps the request it was decoded from alive. prev may be
// nil.
func store(in *heureka.Instance, prev *stored) *stored {
	s := &stored{
		md:           in.Metadata,
		dcmd:         in.DataCenter.Metadata,
		port:         in.Port,
		securePort:   in.SecurePort,
		countryID:    in.CountryID,
		lease:        in.Lease,
		lastUpdated:  in.LastUpdatedTimestamp,
		lastDirty:    in.LastDirtyTimestamp,
		status:       codeOf(string(in.Status)),
		overridden:   codeOf(string(in.OverriddenStatus)),
		action:       codeOf(string(in.ActionType)),
		coordinating: in.IsCoordinatingDiscoveryServer,
	}
	fields := textFields(in)
	if prev != nil && prev.sameText(fields) {
		s.text, s.ends = prev.text, prev.ends
	} else {
		size := 0
		for _, f := range fields {
			size += len(*f)
		}
		var b strings.Builder
		b.Grow(size)
		for i, f := range fields {
			b.WriteString(*f)
			s.ends[i] = uint32(b.Len())
		}
		s.text = b.String()
	}
	for i, f := range fields {
		*f = s.str(i)
	}
	return s
}

// sameText reports whether fields hold s's strings.
func (s *stored) sameText(fields [nText]*string) bool {
	for i, f := range fields {
		if *f != s.str(i) {
			return false
		}
	}
	return true
}

// str returns string i of the text.
func (s *stored) str(i int) string {
	start := uint32(0)
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.text[start:s.ends[i]]
}

func (s *stored) id() string  { return s.str(sID) }
func (s *stored) app() string { return s.str(sApp) }

// load sets *in to the instance s holds. in shares s's strings and
// metadata, which are never modified.
func (s *stored) load(in *heureka.Instance) {
	*in = heureka.Instance{
		Status:                        s.status.status(),
		OverriddenStatus:              s.overridden.status(),
		Port:                          s.port,
		SecurePort:                    s.securePort,
		CountryID:                     s.countryID,
		DataCenter:                    heureka.DataCenterInfo{Metadata: s.dcmd},
		Lease:                         s.lease,
		Metadata:                      s.md,
		IsCoordinatingDiscoveryServer: s.coordinating,
		LastUpdatedTimestamp:          s.lastUpdated,
		LastDirtyTimestamp:            s.lastDirty,
		ActionType:                    s.action.action(),
	}
	for i, f := range textFields(in) {
		*f = s.str(i)
	}
}

// instance returns a new copy of the instance s holds, which the caller
// may change.
func (s *stored) instance() *heureka.Instance {
	in := new(heureka.Instance)
	s.load(in)
	return in
}

// instances returns new copies of the instances recs hold, in one
// allocation.
func instances(recs []*stored) []*heureka.Instance {
	vals := make([]heureka.Instance, len(recs))
	out := make([]*heureka.Instance, len(recs))
	for i, s := range recs {
		s.load(&vals[i])
		out[i] = &vals[i]
	}
	return out
}
