package kafka

// RoleName is a broker's role in the registry: its agent registers it as
// "kafka-broker.<cluster>" with role state RoleController or RoleBroker.
const RoleName = "kafka-broker"

// DefaultPort is a broker's usual listener port.
const DefaultPort = 9092

// Metadata keys a broker's agent registers, beside heureka's own.
const (
	// MetaBrokerID is the broker's node id (broker.id or node.id).
	MetaBrokerID = "broker_id"
	// MetaListener is the listener the broker advertises, "host:port":
	// what clients connect to once bootstrapped.
	MetaListener = "listener"
)

// MetaKRaft is registered, "true", for a broker of a KRaft cluster, whose
// controllers are a quorum of their own: no broker of it is the
// controller, so its cluster has none to expect (roles.Role.NeedsLead).
const MetaKRaft = "kraft"
