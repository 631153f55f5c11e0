// Package hdfs is what heureka knows about Hadoop HDFS, as a pure library:
// no servers, no registry client, no I/O beyond the readers and writers its
// callers pass in.
//
// It covers five things:
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
//     draining, full or penalised (Penalties). Picker wraps it for
//     long-lived callers: it reads a discovery cache, can probe the nodes
//     it chose, and avoids nodes its caller reported as failed (see its
//     Example); `heureka pick` is its command-line form.
//   - NameNode resolution. ResolveNameNodes finds the one active NameNode
//     and orders the rest for client failover.
//   - Hadoop configuration. TopologyLookup implements the topology-script
//     protocol; HDFSSiteHA, HostsInclude, HostsExclude and HostsJSON render
//     the HA client properties and the include/exclude host files.
//
// Units: sizes are bytes, in int64 and in metadata as decimal strings;
// ha_transition_time is milliseconds since the epoch; JMX lastContact is
// seconds, as Hadoop reports it.
//
// Concurrency: every function is safe for concurrent use and keeps no state
// between calls; none modifies the instances it is given. Penalties is the
// one stateful type; its methods may be called concurrently. A
// PlacementRequest's Rand, if set, is used without locking and so must not
// be shared between goroutines.
//
// What it does not do: talk to Hadoop or to the registry (the agent and the
// client do), run the topology script's process (cmd/heureka does), or
// decide liveness (the registry's leases do).
package hdfs
