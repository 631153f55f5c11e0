// Package hdfsrole is the agent's Role for HDFS: it lets package agent
// watch a DataNode or a NameNode, registered as "hdfs-datanode.<cluster>"
// or "hdfs-namenode.<cluster>" (hdfs.RoleName) with the metadata of
// hdfs.NodeInfo. The knowledge is package hdfs's; this package reads a
// daemon and maps what it reads to the agent's terms.
//
//	d, err := hdfsrole.NewJMXDaemon(hdfsrole.DaemonConfig{Role: hdfs.RoleDataNode, JMXURL: "http://127.0.0.1:9864", PortAddr: "127.0.0.1:9866"})
//	role, err := hdfsrole.New(cfg, d) // cfg: DefaultConfig with Role, Port, HTTPPort
//	a, err := agent.New(acfg, registry, role) // acfg.Role = cfg.Name()
//
// Two layers:
//
//   - A Daemon reads the daemon. JMXDaemon is the real one: a probe
//     connects to the data-transfer or client RPC port and reads one small
//     bean (DataNodeInfo, or NameNodeStatus with the HA state) at the same
//     time, and tells a refused connection (agent.ErrRefused) from one
//     accepted but not answered (agent.ErrNoAnswer); a collect reads all
//     of the daemon's own beans, and a DataNode whose JMX gives no
//     capacity takes it from its data directories' filesystems
//     (DiskUsage). A NameNode's collect also reads its configuration
//     (/conf?format=json) until it has answered once, for the nameservice
//     and NameNode ID Hadoop knows it by (hdfs.NameNodeIdentity); a 403
//     or 404, or a configuration without HA keys that name it, leaves
//     them empty and is logged at debug level once.
//   - Role is the agent.Role over a Daemon. Its figures are the Meta*
//     keys of hdfs.NodeInfo, with what Config decides over what the daemon
//     says: the main port (a DataNode's data_port, a NameNode's rpc_port,
//     also the Eureka port), http_port, and a DataNode's admin state as
//     its status. A NameNode's HA state is its role state and is also
//     registered as ha_state with ha_transition_time, from the probe,
//     which owns it: the collect leaves it out. A NameNode's HA identity
//     is registered as nameservice and namenode_id, which
//     hdfs.HDFSSiteHA uses as its ID. A change is material when version,
//     status, ports, rack or HA identity change; when the capacity
//     appears, vanishes or moves by more than DiskChange (1%) of itself;
//     when disk use moves by more than DiskChange of the capacity; or when
//     the block count appears, vanishes or moves by more than BlockChange
//     (1%) of itself.
//
// # Concurrency
//
// A Role keeps no state that changes after New; a JMXDaemon keeps only a
// NameNode's HA identity once learnt, in an atomic pointer. Their methods
// are safe for concurrent use, as agent.Role asks. A JMXDaemon keeps at
// most one idle connection to its daemon.
//
// # What it does not do
//
// It does not read a DataNode's admin state (the NameNode knows it; the
// operator says it in Config.AdminState), decide liveness (the agent
// does), or parse JMX itself (package hdfs does).
package hdfsrole
