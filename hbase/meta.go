package hbase

// The roles' names in the registry: their agents register them as
// "hbase-master.<cluster>" (role state active or backup) and
// "hbase-regionserver.<cluster>" (serving).
const (
	MasterRoleName       = "hbase-master"
	RegionServerRoleName = "hbase-regionserver"
)

// Default RPC ports (hbase.master.port, hbase.regionserver.port), the
// Eureka port of a registered server.
const (
	DefaultMasterPort       = 16000
	DefaultRegionServerPort = 16020
)

// Metadata keys an HBase server's agent registers, beside heureka's own.
const (
	// MetaServerName is tag.serverName, "host,port,startcode": what HBase
	// calls the server (its dead list and its logs), new at each start.
	MetaServerName = "server_name"
	// On the active master: the RegionServers it counts live and dead.
	MetaRegionServers     = "region_servers"
	MetaDeadRegionServers = "dead_region_servers"
	// On a RegionServer: its regions and store files.
	MetaRegionCount    = "region_count"
	MetaStoreFileCount = "store_file_count"
)
