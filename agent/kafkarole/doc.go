// Package kafkarole is the agent's Role for a Kafka broker: it lets
// package agent watch one broker, registered as "kafka-broker.<cluster>"
// with role state "controller" or "broker" (kafka.Report.RoleState). The
// knowledge is package kafka's; this package probes a broker and maps
// what it learns to the agent's terms.
//
//	role, err := kafkarole.New(kafkarole.Config{Addr: "127.0.0.1:9092", NodeID: 1, ClusterID: id})
//	defer role.Close()
//	a, err := agent.New(acfg, registry, role) // acfg.Role = kafka.RoleName
//
// A broker has no HTTP metrics without an exporter, so a probe speaks the
// Kafka protocol itself, through one franz-go client kept for the role's
// life: ApiVersions and Metadata for no topics, every ProbeInterval (two
// small requests on one connection). The controller moving is registered
// at the next probe. kafka.Report.Health decides health: a broker its
// cluster's metadata does not list (fenced, or not registered), and in
// ZooKeeper mode one that knows no controller, is reported DOWN with that
// cause. The client's dialer tells a refused connection (agent.ErrRefused)
// from a connection made and not answered before the probe's deadline
// (agent.ErrNoAnswer: a paused broker keeps its status for the agent's
// HangAfter). In KRaft mode no broker is the controller (see package
// kafka), so every broker's role state is "broker", and each probe adds
// kafka.MetaKRaft ("true") to say so: a cluster without a controller
// broker is then nothing to alert on.
//
// A broker that answers with another cluster id is not this cluster's:
// the probe says it is unhealthy, with a cause that names both ids, so the
// agent logs it and registers the instance DOWN with that cause, never
// UP, with neither its role state nor its figures.
//
// The figures are the Eureka port (Config.Port, or else the port of the
// listener the broker advertises, the one clients use), heureka.MetaVersion
// (the release franz-go guesses from the API versions, when it can),
// kafka.MetaBrokerID and kafka.MetaListener. Every change of them is
// material. Rack reads the broker's broker.rack, for the agent's wiring to
// register as its rack.
//
// # Concurrency
//
// A Role's methods are safe for concurrent use, as agent.Role asks: its
// franz-go client is. Close releases the client.
//
// # What it does not do
//
// It does not produce, consume, read topics or ask the KRaft quorum, or
// decide liveness (the agent does).
package kafkarole
