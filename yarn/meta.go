package yarn

// RoleName is a ResourceManager's role in the registry: its agent
// registers it as "yarn-resourcemanager.<cluster>" with role state
// RoleState ("active" or "standby").
const RoleName = "yarn-resourcemanager"

// DefaultPort is the RM's client RPC port (yarn.resourcemanager.address),
// the one YARN clients submit to: a registered RM's Eureka port.
const DefaultPort = 8032
