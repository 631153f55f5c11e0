package zookeeper

// RoleName is a server's role in the registry: its agent registers it as
// "zookeeper.<cluster>" with its RoleState.
const RoleName = "zookeeper"

// DefaultPort is the client port (clientPort), a registered server's
// Eureka port.
const DefaultPort = 2181

// Metadata keys a server's agent registers, beside heureka's own.
const (
	MetaOutstandingRequests = "outstanding_requests"
	MetaZnodeCount          = "znode_count"
	MetaConnections         = "connections"
)
