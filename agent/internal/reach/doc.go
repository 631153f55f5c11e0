// Package reach tells the agent's roles how a read of their daemon went,
// in the agent's terms: the daemon refused the connection (it is dead:
// agent.ErrRefused), it accepted a connection and said nothing before the
// deadline (it is paused, by a long GC or SIGSTOP: agent.ErrNoAnswer), or
// anything else (the error as it came: it answers, but not as a healthy
// daemon does). The knowledge packages (yarn, hbase, elasticsearch,
// zookeeper) read over HTTP and word their errors for people; Read learns
// what happened on the wire from an httptrace of the exchange, not from
// their messages. Health turns a read into the agent's Health: the
// report's role state and health rules, or, when the knowledge package
// refused a daemon of another cluster, unhealthy with a cause naming both.
// Client is the HTTP client the roles read a daemon on the same host with,
// Base their daemon's base URL, Figures the figures with the daemon's web
// port. Web puts these together for a role that reads one web endpoint
// (yarnrole, elasticsearchrole, zookeeperrole): each such role is then
// its Config, its Collect and its rules for what is material.
//
// # Concurrency
//
// Nothing here keeps state but Web's client; Read and Web's methods are
// safe for concurrent use as far as the read function given is.
//
// # What it does not do
//
// It does not retry, read anything itself, or decide what a failure means
// for the daemon's registration (the agent does). Kafka speaks its own
// protocol: agent/kafkarole tells a refusal from a pause in its dialer.
package reach
