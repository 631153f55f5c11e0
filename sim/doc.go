// Package sim holds simulated daemons, for tests and demos: NOT the real
// systems. A Sim is one HDFS DataNode or NameNode; a Cluster is a small
// cluster of one other system (cluster.go): YARN ResourceManagers, HBase
// masters and RegionServers, Elasticsearch nodes, ZooKeeper servers or
// Kafka brokers (franz-go's kfake, a real Kafka-protocol implementation,
// presented as a ZooKeeper-mode cluster). A Cluster's members answer their
// role's real endpoints in the real shapes, each on a port of its own,
// marked as simulated (the X-Heureka-Simulator header on every HTTP
// answer, a simulator bean in HBase's /jmx, "heureka-simulator" in build
// strings and default cluster ids; the Kafka protocol has no place for a
// mark); Cluster.Handler is their control API: stop, start, pause
// (connections accepted, nothing answered), resume, and the role state
// (a failover, an election, the controller moving). When a member stops,
// the cluster moves as the real one would, at once: the standby RM or the
// backup master takes over, the master counts a RegionServer dead, a new
// Elasticsearch master, ZooKeeper leader or Kafka controller is chosen, a
// ZooKeeper ensemble without a majority stops serving. NewCluster has no
// side effects; Open starts the members (for Kafka, kfake) and Close
// stops them; Run does both around a context, logging each member's
// address and role state (`heureka sim --system`).
//
// A Sim pretends to be one DataNode or one NameNode well enough for
// heureka's agent to watch it:
//
//   - It serves /jmx in Hadoop 3's shape: the {"beans" : [ ... ]} document
//     Hadoop's JMXJsonServlet writes with Jackson's pretty printer, with the
//     beans and attributes the agent reads (DataNodeInfo, FSDatasetState,
//     NameNodeStatus, FSNamesystem, FSNamesystemState, NameNodeInfo, ...)
//     and some it does not, honouring ?qry=ObjectName patterns and
//     ?get=Bean::Attribute. A NameNode with no capacity reports PercentUsed
//     as a bare NaN, as Hadoop does, so readers meet that quirk too.
//   - It serves /conf?format=json in Hadoop's shape (ConfServlet's
//     {"properties": [...]}) with a few keys: where its RPC server listens
//     and, for a NameNode given an HA nameservice (SetHA), the
//     nameservice's dfs.nameservices, dfs.ha.namenodes.<ns> and
//     dfs.namenode.rpc-address.<ns>.<id>, from which the agent learns the
//     NameNode's ID as it would from Hadoop.
//   - It listens on a TCP port standing for the DataNode's data-transfer
//     port or the NameNode's client RPC port. Connections are accepted and
//     held open until the peer closes them; nothing is spoken on them.
//   - With WebHDFSConfig.Dir set, it serves a minimal SIMULATED WebHDFS on
//     the same web port (see webhdfs.go): a NameNode answers GETFILESTATUS,
//     LISTSTATUS, MKDIRS and DELETE, redirects CREATE, APPEND and OPEN to
//     one of its DataNodes (honouring excludedatanodes), and answers
//     StandbyException while not active; a DataNode stores and serves the
//     bytes. The simulated daemons of a cluster share one directory, which
//     stands for both the NameNodes' shared namespace and replication.
//   - It can be told, through a separate control listener, to stop (the
//     /jmx and data/RPC listeners close and every connection on them is
//     cut, so callers get "connection refused" exactly as from a dead
//     daemon), to start again on the same addresses, to switch its HA state
//     and to change its figures. See Handler for the control API.
//
// Every answer says it is simulated: a "Heureka:service=Simulator" bean,
// a "tag.Simulator" attribute on the metrics beans and an
// X-Heureka-Simulator header.
//
// Lifecycle: New has no side effects; Open listens on all three addresses
// (errors come back from Open, not later); Close stops everything and is
// idempotent. Stop and Start may be called any number of times between
// Open and Close.
//
// Concurrency: every method is safe for concurrent use.
//
// What it does not do: speak Hadoop RPC or the data-transfer protocol,
// store blocks (WebHDFS files are plain files), check permissions, or
// change its figures on its own; a Cluster serves no endpoint beyond what
// heureka reads (no YARN scheduler, no HBase RPC, no ZooKeeper client
// port, no Elasticsearch index), and takes none of the real systems'
// timeouts.
package sim
