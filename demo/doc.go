// Package demo runs a small heureka installation in one process, on
// loopback only, for `heureka demo` and for tests: three registry servers,
// peers of each other (server.Server), a SIMULATED HDFS cluster (package
// sim, not Hadoop: two NameNodes, one active and one standby, and
// Config.DataNodes DataNodes over three racks, sharing one simulated
// WebHDFS directory), and a heureka agent with the HDFS role beside each
// simulated daemon. With Config.Roles it also runs a small SIMULATED
// cluster of each other system heureka knows (sim.Cluster: two YARN
// ResourceManagers, two HBase masters and three RegionServers, three
// Elasticsearch nodes, a three-server ZooKeeper ensemble, three Kafka
// brokers on kfake), each member with an agent of its role beside it.
// WriteIntro says what runs and how to try it: kill a DataNode, fail the
// NameNode over, and fail each other system over.
//
//	d := demo.New(cfg)
//	err := d.Open(ctx) // every node registered UP, or an error
//	defer d.Close(ctx) // agents drain first, then simulators and servers
//
// # Concurrency
//
// Open and Close must not run at the same time; URLs, Nodes, Node,
// Systems and WriteIntro may be used once Open has returned. The servers,
// simulators and agents run their own goroutines, all stopped by Close.
//
// # What it does not do
//
// It runs no real Hadoop, YARN, HBase, Elasticsearch, ZooKeeper or Kafka,
// listens on nothing but loopback, and keeps nothing once closed (the
// WebHDFS directory is a temporary one).
package demo
