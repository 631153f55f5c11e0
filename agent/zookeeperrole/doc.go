// Package zookeeperrole is the agent's Role for a ZooKeeper server: it
// lets package agent watch one server, registered as
// "zookeeper.<cluster>" with its role state: leader, follower, observer,
// standalone, read-only or not-serving (zookeeper.Mntr.RoleState). The
// knowledge is package zookeeper's; this package reads a server and maps
// what it reads to the agent's terms.
//
//	role, err := zookeeperrole.New(zookeeperrole.Config{URL: "http://127.0.0.1:8080", Ensemble: "1=zk1:2888,2=zk2:2888,3=zk3:2888", Port: 2181})
//	a, err := agent.New(acfg, registry, role) // acfg.Role = zookeeper.RoleName
//
// A probe asks the server's AdminServer (admin.enableServer, port 8080 by
// default) for GET /commands/mntr and, with Config.Ensemble, for
// /commands/voting_view, every ProbeInterval: a new leader is registered
// at the next probe after its election. zookeeper.Mntr.Health decides
// health: a server that is not serving (it lost its leader: an election
// is under way, or it is cut off from its ensemble), a read-only one, and
// a leader short of a synced majority are reported DOWN with that cause.
// A refused connection is agent.ErrRefused, one accepted and not answered
// agent.ErrNoAnswer (a server in a long GC keeps its status for the
// agent's HangAfter).
//
// ZooKeeper has no cluster id: an ensemble is its voting members. A server
// whose voting members are not Config.Ensemble is another ensemble's: the
// probe says it is unhealthy, with a cause that names both member lists,
// so the agent logs it and registers the instance DOWN with that cause,
// never UP, with neither its role state nor its figures.
//
// The figures are the Eureka port (Config.Port, the client port),
// heureka.MetaVersion, heureka.MetaHTTPPort (the AdminServer's port) and
// zookeeper.MetaOutstandingRequests, MetaZnodeCount and MetaConnections. A
// change of port or version is material; the counts drift and wait for
// the agent's MetadataMaxAge.
//
// # Concurrency
//
// A Role keeps no state that changes after New: its methods are safe for
// concurrent use, as agent.Role asks.
//
// # What it does not do
//
// It does not open a ZooKeeper session, read znodes, use the four-letter
// words (the AdminServer answers the same and tells a refusal from a
// pause the same way as every other HTTP role), or decide liveness (the
// agent does).
package zookeeperrole
