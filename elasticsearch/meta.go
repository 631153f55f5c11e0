package elasticsearch

// RoleName is a node's role in the registry: its agent registers it as
// "elasticsearch.<cluster>" with its RoleState.
const RoleName = "elasticsearch"

// Metadata keys a node's agent registers, beside heureka's own.
const (
	MetaNodeID      = "node_id"
	MetaNodeName    = "node_name"
	MetaNodeRoles   = "node_roles"   // its roles, comma-separated, sorted
	MetaClusterName = "cluster_name" // cluster.name
	// MetaTransportPort is the transport port of the node's publish
	// address, the one discovery.seed_hosts lists (9300 by default).
	MetaTransportPort = "transport_port"
)

// DefaultRackAttribute is the node attribute a rack is usually kept in
// (node.attr.rack_id, as Elasticsearch's allocation-awareness docs name it).
const DefaultRackAttribute = "rack_id"
