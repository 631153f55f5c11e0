package kafka

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// MaxAnswerBytes bounds one response read (kgo.BrokerMaxReadBytes). A
// Metadata response for no topics lists only brokers: a few hundred bytes
// a broker.
const MaxAnswerBytes = 1 << 20

// NoNode is Kafka's "no such node" id (MetadataResponse.NO_CONTROLLER_ID).
const NoNode int32 = -1

// Role states.
const (
	RoleController = "controller" // the cluster's controller (ZooKeeper mode)
	RoleBroker     = "broker"
)

// APIVersions is what ApiVersions says of a broker.
type APIVersions struct {
	Keys int // API keys served
	// KRaft: the cluster has finalized "metadata.version" (KIP-778).
	KRaft bool
	// Guess is franz-go's guess of the release from the API versions,
	// e.g. "v3.9"; "" when it cannot tell.
	Guess string
}

// Broker is one broker as Metadata lists it.
type Broker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   string // broker.rack; "" when unset
}

// Addr is the broker's advertised "host:port".
func (b Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) }

// Metadata is what a Metadata response (for no topics) says.
type Metadata struct {
	ClusterID    string
	ControllerID int32
	Brokers      []Broker
}

// Report is one broker's answer to both questions.
type Report struct {
	Broker    // this broker, as the cluster lists it
	Listed    bool
	ClusterID string
	// ControllerID is the controller broker with ZooKeeper, NoNode with
	// KRaft (see the package doc) or when there is none.
	ControllerID int32
	KRaft        bool
	Version      string // the release guessed from ApiVersions, e.g. "3.9"
	Brokers      int    // live brokers the cluster lists
}

// ParseApiVersions decodes an ApiVersions response body of the given
// version (the bytes after the response header).
func ParseApiVersions(version int16, b []byte) (APIVersions, error) {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = version
	if err := resp.ReadFrom(b); err != nil {
		return APIVersions{}, heureka.Errorf(heureka.EINVALID, "ApiVersions v%d: the response does not decode: %v", version, err)
	}
	return apiVersionsOf(resp)
}

func apiVersionsOf(resp *kmsg.ApiVersionsResponse) (APIVersions, error) {
	if resp.ErrorCode != 0 {
		return APIVersions{}, heureka.Errorf(heureka.EINVALID, "ApiVersions: the broker answered error code %d", resp.ErrorCode)
	}
	if len(resp.ApiKeys) == 0 {
		return APIVersions{}, heureka.Errorf(heureka.EINVALID, "ApiVersions: the broker lists no API keys")
	}
	av := APIVersions{Keys: len(resp.ApiKeys)}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "metadata.version" && f.MaxVersionLevel > 0 {
			av.KRaft = true
		}
	}
	g := kversion.FromApiVersionsResponse(resp).VersionGuess(kversion.TryRaftBroker())
	if v, ok := strings.CutPrefix(g, "v"); ok && !strings.ContainsAny(v, " ") {
		av.Guess = v
	}
	return av, nil
}

// ParseMetadata decodes a Metadata response body of the given version
// (1 or later: version 0 has no controller and no racks).
func ParseMetadata(version int16, b []byte) (Metadata, error) {
	if version < 1 {
		return Metadata{}, heureka.Errorf(heureka.EINVALID, "Metadata v%d: version 1 or later is needed (controller id, racks)", version)
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = version
	if err := resp.ReadFrom(b); err != nil {
		return Metadata{}, heureka.Errorf(heureka.EINVALID, "Metadata v%d: the response does not decode: %v", version, err)
	}
	return metadataOf(resp)
}

func metadataOf(resp *kmsg.MetadataResponse) (Metadata, error) {
	md := Metadata{ControllerID: resp.ControllerID}
	if resp.ClusterID != nil {
		md.ClusterID = *resp.ClusterID
	}
	if resp.ErrorCode != 0 {
		return md, heureka.Errorf(heureka.EINVALID, "Metadata: the broker answered error code %d", resp.ErrorCode)
	}
	for _, b := range resp.Brokers {
		if b.NodeID < 0 || b.Port <= 0 || b.Port > 65535 || b.Host == "" {
			return md, heureka.Errorf(heureka.EINVALID, "Metadata: broker %d has no usable address (%q port %d)", b.NodeID, b.Host, b.Port)
		}
		br := Broker{NodeID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		md.Brokers = append(md.Brokers, br)
	}
	if md.ControllerID < NoNode {
		md.ControllerID = NoNode
	}
	return md, nil
}

// Self says which broker a report is about: its node id (node.id or
// broker.id) when known, else -1 and the address it was reached on.
type Self struct {
	NodeID int32
	Addr   string
}

// NewReport joins the two answers for self. The broker is found by node
// id, else by the advertised address equal to self.Addr; a broker the
// cluster does not list is reported with Listed false (see Health). A
// cluster id other than wantClusterID (when not "") is an ECONFLICT error.
func NewReport(av APIVersions, md Metadata, self Self, wantClusterID string) (Report, error) {
	if wantClusterID != "" && md.ClusterID != wantClusterID {
		return Report{}, heureka.Errorf(heureka.ECONFLICT, "the broker belongs to cluster %q, not %q: not registering it", md.ClusterID, wantClusterID)
	}
	r := Report{ClusterID: md.ClusterID, ControllerID: md.ControllerID, KRaft: av.KRaft, Version: av.Guess, Brokers: len(md.Brokers)}
	if av.KRaft {
		r.ControllerID = NoNode
	}
	r.NodeID = self.NodeID
	for _, b := range md.Brokers {
		if (self.NodeID >= 0 && b.NodeID == self.NodeID) || (self.NodeID < 0 && sameAddr(b.Addr(), self.Addr)) {
			r.Broker, r.Listed = b, true
			break
		}
	}
	if !r.Listed && self.NodeID < 0 {
		return Report{}, heureka.Errorf(heureka.EINVALID, "no broker advertises %s (they are %s): give the broker's node id", self.Addr, addrs(md.Brokers))
	}
	return r, nil
}

func sameAddr(a, b string) bool {
	ah, ap, err1 := net.SplitHostPort(a)
	bh, bp, err2 := net.SplitHostPort(b)
	return err1 == nil && err2 == nil && ap == bp && strings.EqualFold(ah, bh)
}

func addrs(bs []Broker) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = fmt.Sprintf("%d=%s", b.NodeID, b.Addr())
	}
	return strings.Join(s, ", ")
}

// Health says whether the broker serves its cluster, and if not why:
//   - the cluster's metadata does not list it: it is not registered, or
//     fenced (KRaft lists only unfenced brokers), so no client is sent to
//     it;
//   - with ZooKeeper, no controller is known: the broker has lost the
//     cluster (no partition leadership can change).
func (r Report) Health() (bool, string) {
	switch {
	case !r.Listed:
		return false, fmt.Sprintf("kafka broker %d is not in its cluster's metadata (fenced, or not registered)", r.NodeID)
	case !r.KRaft && r.ControllerID == NoNode:
		return false, "kafka broker knows no controller"
	}
	return true, ""
}

// RoleState is "controller" for the controller broker (ZooKeeper mode),
// else "broker".
func (r Report) RoleState() string {
	if r.Listed && r.ControllerID >= 0 && r.ControllerID == r.NodeID {
		return RoleController
	}
	return RoleBroker
}

// NewClient returns a franz-go client for probing the broker at addr: it
// is seeded with that broker alone and reads at most MaxAnswerBytes a
// response. opts (TLS, SASL, ...) are added. The caller closes it.
func NewClient(addr string, opts ...kgo.Opt) (*kgo.Client, error) {
	// It never fetches; the fetch bound only has to fit under the read bound.
	base := []kgo.Opt{kgo.SeedBrokers(addr), kgo.BrokerMaxReadBytes(MaxAnswerBytes), kgo.FetchMaxBytes(MaxAnswerBytes), kgo.ClientID("heureka-agent")}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, heureka.Errorf(heureka.EINVALID, "kafka client for %s: %v", addr, err)
	}
	return cl, nil
}

// Probe asks the broker cl is seeded with (see NewClient) ApiVersions and
// Metadata, bounded by ctx, and builds its Report. Errors name the broker:
// EUNAVAILABLE when it cannot be reached or does not answer in time,
// EINVALID for answers that are not what a broker says, ECONFLICT for a
// broker of another cluster.
func Probe(ctx context.Context, cl *kgo.Client, self Self, wantClusterID string) (Report, error) {
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return Report{}, heureka.Errorf(heureka.EINVALID, "kafka client has no seed broker")
	}
	seed := seeds[0]
	ar, err := seed.Request(ctx, apiVersionsRequest())
	if err != nil {
		return Report{}, heureka.Errorf(heureka.EUNAVAILABLE, "kafka broker %s: ApiVersions: %v", self.Addr, err)
	}
	av, err := apiVersionsOf(ar.(*kmsg.ApiVersionsResponse))
	if err != nil {
		return Report{}, heureka.Errorf(heureka.EINVALID, "kafka broker %s: %v", self.Addr, err)
	}
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Topics = []kmsg.MetadataRequestTopic{} // none: brokers only
	mr, err := seed.Request(ctx, mreq)
	if err != nil {
		return Report{}, heureka.Errorf(heureka.EUNAVAILABLE, "kafka broker %s: Metadata: %v", self.Addr, err)
	}
	md, err := metadataOf(mr.(*kmsg.MetadataResponse))
	if err != nil {
		return Report{}, heureka.Errorf(heureka.EINVALID, "kafka broker %s: %v", self.Addr, err)
	}
	r, err := NewReport(av, md, self, wantClusterID)
	if err != nil {
		return Report{}, heureka.Errorf(heureka.ErrorCode(err), "kafka broker %s: %v", self.Addr, err)
	}
	return r, nil
}

// apiVersionsRequest is the ApiVersions request Probe sends. From version
// 3 a broker refuses (INVALID_REQUEST) a request without a client
// software name and version matching [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?.
func apiVersionsRequest() *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "heureka-agent"
	req.ClientSoftwareVersion = "1"
	return req
}
