// Package hbase is what heureka knows about HBase masters and
// RegionServers, read from their web port's /jmx (the master's
// Hadoop:service=HBase,name=Master,sub=Server bean, the RegionServer's
// ...,name=RegionServer,sub=Server): whether a master is the active one,
// the server name HBase knows a server by, the cluster id, the master's
// live and dead RegionServers and a RegionServer's regions and store
// files. It holds no heureka registry client or server.
//
//   - ParseMaster and ParseRegionServer read a /jmx (or /jmx?qry=) answer,
//     tolerating the bare NaN/Infinity tokens Hadoop's metrics servlet
//     writes (read as absent).
//   - ReadMaster and ReadRegionServer ask one server, bounded in size
//     (MaxAnswerBytes) and by the caller's context, and refuse a server of
//     another cluster (tag.clusterId).
//   - Master.Health, RegionServer.Health (with the active master's view)
//     and the RoleState methods: the rules are on the methods.
//
// HBase's /jmx carries no HBase version; Version fields are absent here.
//
// Concurrency: every function is safe for concurrent use.
//
// What it does not do: speak HBase RPC, read tables, or decide liveness.
package hbase
