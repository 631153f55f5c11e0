// Package roles is what heureka's consumers know of the roles its agents
// register, without knowing any system: for each role (the HDFS
// NameNodes and DataNodes, YARN ResourceManagers, HBase masters and
// RegionServers, Elasticsearch nodes, ZooKeeper servers, Kafka brokers),
// the system it belongs to, what people call its members, the role states
// its agents report, and which of them leads the cluster (the active
// ResourceManager, the ZooKeeper leader, the Kafka controller, ...). The
// dashboard marks the lead, the server's metrics count members by role
// state, the alert forwarder and the Prometheus rules raise a role's
// Alert when a cluster has members UP and none leading, and `heureka
// pick` puts the lead first.
//
// The names and states are the knowledge packages' (hdfs, yarn, hbase,
// elasticsearch, zookeeper, kafka); this package only gathers them.
//
// # Concurrency
//
// Everything here is read-only after package initialisation and safe for
// concurrent use.
//
// # What it does not do
//
// It reads no daemon and decides no instance's health (the agent's roles
// do), and knows no role an agent of another program might register: for
// an application whose role it does not know, Parse says so and consumers
// show it as a plain application.
package roles
