// Package elasticsearchrole is the agent's Role for an Elasticsearch
// node: it lets package agent watch one node, registered as
// "elasticsearch.<cluster>" with its role state: "master" for the elected
// master, else "master-eligible", "data", its first role or
// "coordinating" (elasticsearch.Node.RoleState). The knowledge is package
// elasticsearch's; this package reads a node and maps what it reads to the
// agent's terms.
//
//	role, err := elasticsearchrole.New(elasticsearchrole.Config{URL: "http://127.0.0.1:9200", ClusterUUID: uuid, RackAttribute: "rack_id"})
//	a, err := agent.New(acfg, registry, role) // acfg.Role = elasticsearch.RoleName
//
// A probe asks the node, every ProbeInterval, for GET /_nodes/_local,
// /_cluster/state/master_node?local=true and /_cluster/health?local=true,
// each answered from the node's own state: the elected master moving is
// registered at the next probe. elasticsearch.Node.Health decides health:
// a node that knows no elected master (it left the cluster, or there is
// no master quorum), or that holds data while the cluster is red, is
// reported DOWN with that cause. A refused connection is agent.ErrRefused,
// one accepted and not answered agent.ErrNoAnswer (a node in a long GC
// keeps its status for the agent's HangAfter).
//
// A node that answers with another cluster UUID is not this cluster's:
// the probe says it is unhealthy, with a cause that names both, so the
// agent logs it and registers the instance DOWN with that cause, never
// UP, with neither its role state nor its figures.
//
// The figures are the Eureka port (Config.Port, or else the node's HTTP
// publish port), heureka.MetaVersion, and elasticsearch.MetaNodeID,
// MetaNodeName, MetaNodeRoles, MetaClusterName and MetaTransportPort (for
// discovery.seed_hosts). Every change of them is material. Rack reads the
// node's rack attribute, for the agent's wiring to register as its rack.
//
// # Concurrency
//
// A Role keeps no state that changes after New: its methods are safe for
// concurrent use, as agent.Role asks.
//
// # What it does not do
//
// It does not read indices or shards, sniff other nodes, or decide
// liveness (the agent does).
package elasticsearchrole
