// Package hbaserole is the agent's Role for HBase: it lets package agent
// watch a master, registered as "hbase-master.<cluster>" with role state
// "active" or "backup", or a RegionServer, registered as
// "hbase-regionserver.<cluster>" with role state "serving". The knowledge
// is package hbase's; this package reads a server and maps what it reads
// to the agent's terms.
//
//	role, err := hbaserole.New(hbaserole.Config{Role: hbase.RegionServerRoleName, URL: "http://127.0.0.1:16030",
//		ClusterID: id, MasterURLs: []string{"http://hm1:16010", "http://hm2:16010"}, MasterCheckInterval: 10 * time.Second})
//	a, err := agent.New(acfg, registry, role) // acfg.Role = cfg.Role
//
// A probe reads the server's Server bean from its info port's /jmx every
// ProbeInterval: whether a master is the active one (a backup master
// taking over is registered at the next probe), and what a RegionServer
// is called (tag.serverName). A master that answers is healthy (a backup
// waits to take over). A RegionServer is unhealthy when the active master
// counts it dead (hbase.RegionServer.Health): it has lost its ZooKeeper
// session and its regions are being reassigned, whatever it says itself.
// To know that, its probe asks Config.MasterURLs which master is active,
// at most every MasterCheckInterval, since the active master's answer
// lists every RegionServer; without MasterURLs, or when no master
// answers as active, that check is skipped. A refused connection to the
// server is agent.ErrRefused, one accepted and not answered
// agent.ErrNoAnswer; the masters' answers never decide either.
//
// A server that answers with another cluster id (tag.clusterId) is not
// this cluster's: the probe says it is unhealthy, with a cause that names
// both ids, so the agent logs it and registers the instance DOWN with that
// cause, never UP, with neither its role state nor its figures.
//
// The figures are the Eureka port (Config.Port, or else the RPC port in
// tag.serverName), heureka.MetaHTTPPort (the info port in Config.URL),
// hbase.MetaServerName, and the active master's hbase.MetaRegionServers
// and MetaDeadRegionServers or a RegionServer's MetaRegionCount and
// MetaStoreFileCount. HBase's /jmx carries no version, so none is
// registered. A change of port, server name or a master's RegionServer
// counts is material; regions and store files drift and wait for the
// agent's MetadataMaxAge.
//
// # Concurrency
//
// A Role's methods are safe for concurrent use, as agent.Role asks; the
// master's view a RegionServer's probe keeps is guarded by a mutex.
//
// # What it does not do
//
// It does not speak HBase RPC, read tables or ZooKeeper, or decide
// liveness (the agent does).
package hbaserole
