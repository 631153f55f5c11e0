// Package hdfs is what heureka knows about Hadoop HDFS: no servers and no
// registry client. Almost all of it is pure functions; the exceptions are
// named below (Picker and Penalties keep state; DialProbe dials).
//
// It covers seven things:
//
//   - Naming and metadata. DataNodes register as "hdfs-datanode.<cluster>"
//     and NameNodes as "hdfs-namenode.<cluster>" (AppName, ParseAppName,
//     which also reads the upper-case names Eureka serves), with instance IDs
//     "<cluster>-<host>-<rack>" (InstanceID) and the metadata keys Meta*,
//     read and written through NodeInfo.
//   - JMX. ParseDataNodeJMX and ParseNameNodeJMX read a daemon's /jmx (or
//     /jmx?qry=...) answer from Hadoop 2.7 to 3.x: capacity, block counts,
//     version, HA state and the NameNode's view of its DataNodes. They
//     accept the bare NaN and Infinity tokens Hadoop writes, attributes that
//     hold JSON inside a string, and bare beans without the "beans" wrapper.
//   - Placement. ChooseDataNodes picks DataNodes for a new block the way
//     HDFS's default placement policy does, skipping nodes that are down,
//     draining, full or penalised (Penalties), and taking nodes whose agent
//     marked them probe_state=hung (a long GC pause) last. Picker wraps it
//     for long-lived callers: it reads a discovery cache, can probe the
//     nodes it chose, and avoids nodes its caller reported as failed (see
//     its Example); `heureka pick` is its command-line form. A
//     DataNodeSet prepares a large application once (and its next version
//     from it) for many choices; a Picker's Chooser can be a registry that
//     chooses server-side.
//   - NameNode resolution. ResolveNameNodes finds the one active NameNode
//     and orders the rest for client failover. NameNodeIDs binds each
//     NameNode to an ID in Hadoop's HA configuration by host, never by
//     rank; NameNodeIdentity finds a NameNode's own nameservice and ID in
//     its configuration (ParseConfJSON reads a daemon's /conf?format=json)
//     as Hadoop's HAUtil does.
//   - The client's last hop. A Picker chooses DataNodes (ChooseDataNodes
//     over what its DataNodes func returns, usually a discovery cache) and
//     resolves NameNodes; with a Probe it checks each chosen DataNode first,
//     and it keeps a local penalty list (Penalties) of nodes that failed a
//     probe or were reported with Report.
//   - Hadoop's defaults: the ports of hdfs-default.xml
//     (DefaultNameNodeRPCPort, DefaultDataNodeDataPort, ...).
//   - Hadoop configuration. TopologyLookup and TopologyRacks implement the
//     topology-script protocol, and RackMemory is its bounded memory of
//     racks answered, for when the registry cannot be read (AnswerRacks is
//     the policy between the two); HDFSSiteHA, HostsInclude, HostsExclude and HostsJSON render
//     the HA client properties and the include/exclude host files.
//
// Units: sizes are bytes, in int64 and in metadata as decimal strings;
// ha_transition_time is milliseconds since the epoch; JMX lastContact is
// seconds, as Hadoop reports it.
//
// State and I/O: the functions keep no state between calls and do no I/O
// beyond the readers and writers their callers pass in; none modifies the
// instances it is given. Two types keep state: Penalties (which nodes are
// avoided, until when, on its injected clock) and Picker (its Penalties,
// made on first use if nil); a DataNodeSet is immutable once made, and a
// RackMemory is a plain value its owner reads and writes (through
// ReadRackMemory and WriteTo). One function does network I/O: DialProbe's
// probe opens a TCP connection to a DataNode's data port, and Picker.Choose
// calls a Probe, if set, for each chosen node, in parallel.
//
// Concurrency: every function, Penalties' methods, a Picker's methods and
// a DataNodeSet's are safe for concurrent use; a RackMemory is not. A PlacementRequest's Rand, if set, is used
// without locking and so must not be shared between goroutines.
//
// What it does not do: talk to Hadoop or to the registry (the agent and the
// client do), run the topology script's process (cmd/heureka does), or
// decide liveness (the registry's leases do).
package hdfs
