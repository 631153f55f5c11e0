// Package metrics holds the test that every metric the shipped Prometheus
// rules (packaging/prometheus) and Grafana dashboard (packaging/grafana)
// name is exported by a real scrape: a two-peer registry cluster with a
// simulated HDFS NameNode pair and DataNode registered by their agents, and
// a WebHDFS gateway, each run as a process of the heureka binary.
//
// It has no non-test code. It does not check that the rules fire (promtool
// does, in scripts/test) or that the dashboard renders.
package metrics
