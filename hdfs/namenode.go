package hdfs

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
)

// Hadoop's default ports (hdfs-default.xml), for daemons that say nothing
// else.
const (
	// DefaultNameNodeRPCPort is used for a NameNode that registered no
	// rpc_port (fs.defaultFS, dfs.namenode.rpc-address).
	DefaultNameNodeRPCPort = 8020
	// DefaultDataNodeDataPort is a DataNode's data-transfer port
	// (dfs.datanode.address).
	DefaultDataNodeDataPort = 9866
	// DefaultDataNodeHTTPPort and DefaultNameNodeHTTPPort serve /jmx
	// (dfs.datanode.http.address, dfs.namenode.http-address).
	DefaultDataNodeHTTPPort = 9864
	DefaultNameNodeHTTPPort = 9870
)

// Resolution is the NameNodes of one cluster as a client should use them.
type Resolution struct {
	// Active is the active NameNode; nil when none claims to be.
	Active *heureka.Instance
	// NameNodes are the UP NameNodes in the order a client should try
	// them: the active one, then any other claimant of "active" (see
	// Conflict), standbys, observers, and the rest (initializing, unknown),
	// each group by instance ID.
	NameNodes []*heureka.Instance
	// Addresses are NameNodes' "host:rpc_port", usable as
	// github.com/colinmarc/hdfs/v2 ClientOptions.Addresses, which fails
	// over in slice order.
	Addresses []string
	// Conflict is non-empty when more than one NameNode claims to be
	// active; it names them and says which was chosen.
	Conflict string
}

// ResolveNameNodes finds the active NameNode among nns by their ha_state
// metadata, ignoring instances that are not UP. There is never more than
// one active: when several claim it, the one with the latest
// ha_transition_time wins (ties go to the latest LastDirtyTimestamp, then
// to the smallest ID), the others are listed right after it, and Conflict
// says so. With no active NameNode the error is ENOTFOUND, and the
// Resolution still lists the others so a client can try them.
//
// A NameNode's address is its host name (else its IP address) and its
// rpc_port metadata, else DefaultNameNodeRPCPort.
func ResolveNameNodes(nns []*heureka.Instance) (Resolution, error) {
	var res Resolution
	type nn struct {
		in   *heureka.Instance
		ha   HAState
		when int64
	}
	var actives, standbys, observers, others []nn
	seen := map[string]bool{}
	down := 0
	for _, in := range nns {
		if in == nil || seen[in.ID] {
			continue
		}
		seen[in.ID] = true
		if in.Status != heureka.StatusUp {
			down++
			continue
		}
		ha, _ := ParseHAState(in.Metadata.Get(MetaHAState))
		when, _ := metaInt(in.Metadata, MetaHATransitionTime)
		x := nn{in, ha, when}
		switch ha {
		case HAActive:
			actives = append(actives, x)
		case HAStandby:
			standbys = append(standbys, x)
		case HAObserver:
			observers = append(observers, x)
		default:
			others = append(others, x)
		}
	}
	byID := func(s []nn) {
		sort.Slice(s, func(i, j int) bool { return s[i].in.ID < s[j].in.ID })
	}
	sort.Slice(actives, func(i, j int) bool {
		a, b := actives[i], actives[j]
		if a.when != b.when {
			return a.when > b.when
		}
		if a.in.LastDirtyTimestamp != b.in.LastDirtyTimestamp {
			return a.in.LastDirtyTimestamp > b.in.LastDirtyTimestamp
		}
		return a.in.ID < b.in.ID
	})
	byID(standbys)
	byID(observers)
	byID(others)

	if len(actives) > 1 {
		var names []string
		for _, a := range actives {
			names = append(names, fmt.Sprintf("%s (ha_transition_time %d)", a.in.ID, a.when))
		}
		res.Conflict = fmt.Sprintf("%d NameNodes claim to be active: %s; chose %s, the latest to become active",
			len(actives), strings.Join(names, ", "), actives[0].in.ID)
	}
	for _, group := range [][]nn{actives, standbys, observers, others} {
		for _, x := range group {
			res.NameNodes = append(res.NameNodes, x.in)
			res.Addresses = append(res.Addresses, NameNodeAddress(x.in))
		}
	}
	if len(actives) > 0 {
		res.Active = actives[0].in
		return res, nil
	}
	if len(res.NameNodes) == 0 {
		return res, heureka.Errorf(heureka.ENOTFOUND, "no active NameNode: none of %d NameNodes is UP", down)
	}
	var states []string
	for _, in := range res.NameNodes {
		st := strings.TrimSpace(in.Metadata.Get(MetaHAState))
		if st == "" {
			st = "no ha_state"
		}
		states = append(states, in.ID+" "+st)
	}
	return res, heureka.Errorf(heureka.ENOTFOUND, "no active NameNode among %d UP NameNodes (%s)", len(res.NameNodes), strings.Join(states, ", "))
}

// NameNodeAddress returns in's client RPC address, "host:port": its host
// name (else IP address) and its rpc_port metadata, else
// DefaultNameNodeRPCPort.
func NameNodeAddress(in *heureka.Instance) string {
	host := in.HostName
	if host == "" {
		host = in.IPAddr
	}
	port, ok := metaInt(in.Metadata, MetaRPCPort)
	if !ok || port < 1 || port > 65535 {
		port = DefaultNameNodeRPCPort
	}
	return net.JoinHostPort(host, strconv.FormatInt(port, 10))
}
