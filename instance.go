package heureka

import (
	"fmt"
	"strings"
)

// Status is an instance's Eureka status. Only the five values below exist on
// the wire; anything else a client sends is read as StatusUnknown so that no
// reader downstream ever sees a value it cannot parse.
type Status string

const (
	StatusUp           Status = "UP"
	StatusDown         Status = "DOWN"
	StatusStarting     Status = "STARTING"
	StatusOutOfService Status = "OUT_OF_SERVICE"
	StatusUnknown      Status = "UNKNOWN"
)

// Statuses lists every status in the ascending name order Eureka's
// apps__hashcode uses.
var Statuses = []Status{StatusDown, StatusOutOfService, StatusStarting, StatusUnknown, StatusUp}

// ParseStatus returns the status named s (case-insensitive), or an EINVALID
// error naming the accepted values.
func ParseStatus(s string) (Status, error) {
	switch st := Status(strings.ToUpper(strings.TrimSpace(s))); st {
	case StatusUp, StatusDown, StatusStarting, StatusOutOfService, StatusUnknown:
		return st, nil
	}
	return "", Errorf(EINVALID, "unknown status %q: want one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN", s)
}

// LenientStatus reads a status the way Eureka's decoder does: an empty or
// unknown value becomes def.
func LenientStatus(s string, def Status) Status {
	if s == "" {
		return def
	}
	st, err := ParseStatus(s)
	if err != nil {
		return StatusUnknown
	}
	return st
}

// ActionType says how an instance in a delta changed.
type ActionType string

const (
	ActionAdded    ActionType = "ADDED"
	ActionModified ActionType = "MODIFIED"
	ActionDeleted  ActionType = "DELETED"
)

// Port is a Eureka port: a number and whether it is enabled.
type Port struct {
	Number  int
	Enabled bool
}

// Data-centre names that Java readers accept; any other name is stored as
// DataCenterMyOwn, since an unknown value would break every Java client's fetch.
const (
	DataCenterMyOwn   = "MyOwn"
	DataCenterAmazon  = "Amazon"
	DataCenterNetflix = "Netflix"
)

// DataCenterInfo says where an instance runs. Metadata is kept only for
// Amazon, the one class that carries it on the wire.
type DataCenterInfo struct {
	Name     string
	Metadata Metadata
}

// LeaseInfo is the lease part of an instance record. Clients choose the
// intervals; the registry fills the timestamps (milliseconds since the epoch).
type LeaseInfo struct {
	RenewalIntervalSecs   int
	DurationSecs          int
	RegistrationTimestamp int64
	LastRenewalTimestamp  int64
	EvictionTimestamp     int64
	ServiceUpTimestamp    int64
}

// Eureka's client defaults, used when a registrant sends zero or nothing.
const (
	DefaultRenewalIntervalSecs = 30
	DefaultLeaseDurationSecs   = 90
	DefaultPort                = 7001
	DefaultSecurePort          = 7002
)

// Instance is one registered instance, as Eureka's InstanceInfo describes it.
// Values held by the registry are never modified after they are published;
// a change makes a new Instance (see Clone).
type Instance struct {
	ID               string // the registry key; Eureka's getId()
	App              string // upper-case
	AppGroupName     string
	HostName         string
	IPAddr           string
	SID              string
	Status           Status
	OverriddenStatus Status
	Port             Port
	SecurePort       Port
	CountryID        int
	DataCenter       DataCenterInfo
	Lease            LeaseInfo
	Metadata         Metadata

	HomePageURL          string
	StatusPageURL        string
	HealthCheckURL       string
	SecureHealthCheckURL string
	VIPAddress           string
	SecureVIPAddress     string
	ASGName              string

	IsCoordinatingDiscoveryServer bool
	LastUpdatedTimestamp          int64
	LastDirtyTimestamp            int64
	ActionType                    ActionType
}

// Clone returns a copy of in that shares nothing a change could reach:
// the strings and the metadata it shares are immutable.
func (in *Instance) Clone() *Instance {
	c := *in
	return &c
}

// Normalize fills Eureka's defaults for what a registrant left out and
// canonicalises what readers are strict about: upper-case app names, known
// statuses, lease intervals, data-centre names, a non-nil metadata map.
// The registry stores only normalised instances.
func (in *Instance) Normalize() {
	in.App = strings.ToUpper(in.App)
	in.AppGroupName = strings.ToUpper(in.AppGroupName)
	in.Status = LenientStatus(string(in.Status), StatusUp)
	in.OverriddenStatus = LenientStatus(string(in.OverriddenStatus), StatusUnknown)
	if in.Lease.RenewalIntervalSecs <= 0 {
		in.Lease.RenewalIntervalSecs = DefaultRenewalIntervalSecs
	}
	if in.Lease.DurationSecs <= 0 {
		in.Lease.DurationSecs = DefaultLeaseDurationSecs
	}
	if in.CountryID == 0 {
		in.CountryID = 1
	}
	switch in.DataCenter.Name {
	case DataCenterAmazon, DataCenterNetflix:
	default:
		in.DataCenter.Name = DataCenterMyOwn
	}
	if in.DataCenter.Name != DataCenterAmazon {
		in.DataCenter.Metadata = Metadata{}
	}
	in.Metadata = in.Metadata.Without("@class", "class")
	if in.ID == "" {
		in.ID = in.DataCenter.Metadata.Get("instance-id")
	}
	if in.ID == "" {
		in.ID = in.HostName
	}
}

// Limits bound what one registrant may store.
type Limits struct {
	MaxIDLength       int // instance IDs, host names, app names
	MaxFieldLength    int // URLs, VIP addresses and other free text
	MaxMetadata       int // metadata entries
	MaxMetadataBytes  int // keys plus values
	MaxMetadataKeyLen int
}

// DefaultLimits are the bounds from the design notes: metadata rides in every
// registry response, so it is kept small.
func DefaultLimits() Limits {
	return Limits{
		MaxIDLength:       256,
		MaxFieldLength:    2048,
		MaxMetadata:       64,
		MaxMetadataBytes:  8 << 10,
		MaxMetadataKeyLen: 256,
	}
}

// Validate reports the first limit that cannot work, as a *ConfigError:
// lengths must be positive, counts and sizes zero or more.
func (l Limits) Validate() error {
	for _, f := range []struct {
		field string
		v     int
		min   int
	}{
		{"MaxIDLength", l.MaxIDLength, 1}, {"MaxFieldLength", l.MaxFieldLength, 1},
		{"MaxMetadata", l.MaxMetadata, 0}, {"MaxMetadataBytes", l.MaxMetadataBytes, 0},
		{"MaxMetadataKeyLen", l.MaxMetadataKeyLen, 1},
	} {
		if f.v < f.min {
			return InvalidConfig(f.field, f.v, "want at least %d (start from DefaultLimits)", f.min)
		}
	}
	return nil
}

// Validate checks a normalised instance against Eureka's registration rules
// (in Eureka's order and words) and against l. The error is EINVALID and names
// the field.
func (in *Instance) Validate(l Limits) error {
	switch {
	case in.ID == "":
		return Errorf(EINVALID, "Missing instanceId")
	case in.HostName == "":
		return Errorf(EINVALID, "Missing hostname")
	case in.IPAddr == "":
		return Errorf(EINVALID, "Missing ip address")
	case in.App == "":
		return Errorf(EINVALID, "Missing appName")
	}
	if err := ValidateName("instanceId", in.ID, l.MaxIDLength); err != nil {
		return err
	}
	if err := ValidateName("app", in.App, l.MaxIDLength); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{
		{"hostName", in.HostName}, {"ipAddr", in.IPAddr}, {"appGroupName", in.AppGroupName},
		{"sid", in.SID}, {"asgName", in.ASGName},
	} {
		if err := validateText(f.name, f.v, l.MaxIDLength); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{
		{"homePageUrl", in.HomePageURL}, {"statusPageUrl", in.StatusPageURL},
		{"healthCheckUrl", in.HealthCheckURL}, {"secureHealthCheckUrl", in.SecureHealthCheckURL},
		{"vipAddress", in.VIPAddress}, {"secureVipAddress", in.SecureVIPAddress},
	} {
		if err := validateText(f.name, f.v, l.MaxFieldLength); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"port", in.Port.Number}, {"securePort", in.SecurePort.Number}} {
		if p.v < 0 || p.v > 65535 {
			return Errorf(EINVALID, "%s %d is out of range 0-65535", p.name, p.v)
		}
	}
	if err := ValidateMetadata(in.Metadata, l); err != nil {
		return err
	}
	if in.DataCenter.Metadata.Len() > l.MaxMetadata {
		return Errorf(EINVALID, "dataCenterInfo metadata has %d entries; the limit is %d", in.DataCenter.Metadata.Len(), l.MaxMetadata)
	}
	return nil
}

// ValidateMetadata checks a metadata map against the entry, size and key
// limits in l.
func ValidateMetadata(md Metadata, l Limits) error {
	if md.Len() > l.MaxMetadata {
		return Errorf(EINVALID, "metadata has %d entries; the limit is %d", md.Len(), l.MaxMetadata)
	}
	for k, v := range md.All() {
		if k == "" {
			return Errorf(EINVALID, "metadata has an empty key")
		}
		if err := validateText("metadata key", k, l.MaxMetadataKeyLen); err != nil {
			return err
		}
		if hasControl(v) {
			return Errorf(EINVALID, "metadata value of %q contains a control character", k)
		}
	}
	if size := md.Size(); size > l.MaxMetadataBytes {
		return Errorf(EINVALID, "metadata is %d bytes; the limit is %d bytes (keys plus values)", size, l.MaxMetadataBytes)
	}
	return nil
}

// ValidateName checks an app name or instance ID: non-empty, at most max
// bytes, valid UTF-8 without control characters or slashes (IDs travel as
// one URL path segment).
func ValidateName(field, v string, max int) error {
	if v == "" {
		return Errorf(EINVALID, "%s is empty", field)
	}
	if err := validateText(field, v, max); err != nil {
		return err
	}
	if strings.ContainsAny(v, "/\\") {
		return Errorf(EINVALID, "%s %q contains a slash", field, v)
	}
	if strings.TrimSpace(v) != v {
		return Errorf(EINVALID, "%s %q has leading or trailing spaces", field, v)
	}
	return nil
}

func validateText(field, v string, max int) error {
	if len(v) > max {
		return Errorf(EINVALID, "%s is %d bytes long; the limit is %d", field, len(v), max)
	}
	if !utf8Valid(v) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	if hasControl(v) {
		return Errorf(EINVALID, "%s %q contains a control character", field, v)
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// HostKey is how a host name or IP address is matched wherever heureka
// looks an instance up by host (the registry's host index, the topology
// script's memory): trimmed, and in lower case (host names are
// case-insensitive; an IP address has no case but IPv6 hex digits do).
func HostKey(h string) string { return strings.ToLower(strings.TrimSpace(h)) }

// String names an instance for logs and errors.
func (in *Instance) String() string { return fmt.Sprintf("%s/%s", in.App, in.ID) }

// ToldPeersHeader, on a heartbeat or a registration, names the registry
// servers its sender sends that write to itself in this round: their base
// URLs as the sender lists them, comma-separated, spelt by
// urlcheck.PeerName (no credentials), the server the request goes to
// included. A heureka server forwards the write to each of its peers that
// the header does not name, and to none that it names: a peer named there
// hears from the sender directly. A name the server cannot match to a
// peer URL of its own, spelt the same way, names nobody, so the server
// replicates whenever in doubt. A heartbeat or registration without the
// header, as every Eureka client sends it, is forwarded to every peer.
//
// heureka's agent sends it on every heartbeat and on the registrations it
// sends a peer that answered 404 (client.RenewTold, client.RenewOthers);
// with one registry URL it names only that URL, and the server
// replicates the heartbeat to all its peers. Other Eureka servers ignore
// it and replicate as usual, which costs more and is just as correct.
//
// It replaces X-Heureka-Every-Peer: true, which older agents send and
// which said "do not replicate" even when the agent had no other peer to
// tell. heureka servers ignore that header now: an older agent's writes
// are replicated to every peer, like a plain Eureka client's.
const ToldPeersHeader = "X-Heureka-Told-Peers"
