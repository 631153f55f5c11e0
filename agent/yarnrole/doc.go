// Package yarnrole is the agent's Role for a YARN ResourceManager: it
// lets package agent watch one RM, registered as
// "yarn-resourcemanager.<cluster>" (yarn.RoleName) with role state
// "active" or "standby". The knowledge is package yarn's; this package
// reads an RM and maps what it reads to the agent's terms.
//
//	role, err := yarnrole.New(yarnrole.Config{URL: "http://127.0.0.1:8088", ClusterID: "yarn-prod", Port: 8032})
//	a, err := agent.New(acfg, registry, role) // acfg.Role = yarn.RoleName
//
// A probe asks the RM's web port for GET /ws/v1/cluster/info (which a
// standby answers itself) and, with Config.ClusterID, for its
// yarn.resourcemanager.cluster-id (GET /conf?name=...), every
// ProbeInterval: two small answers. The HA state is the role state, so a
// failover is registered at the next probe. yarn.ResourceManager.Health
// decides health: an RM whose service is not STARTED, that is
// initializing or stopping, or whose elector lost ZooKeeper is reported
// DOWN with that cause. A refused connection is agent.ErrRefused, one
// accepted and not answered agent.ErrNoAnswer (a paused RM keeps its
// status for the agent's HangAfter), anything else a failed probe.
//
// An RM that answers with another cluster id is not this cluster's: the
// probe says it is unhealthy, with a cause that names both ids, so the
// agent logs it and registers the instance DOWN with that cause, never
// UP, with neither its role state nor its figures; a collect refuses it
// too.
//
// The figures are the Eureka port (Config.Port, the client RPC port YARN
// clients submit to, 8032 by default), heureka.MetaVersion (the RM's
// version) and heureka.MetaHTTPPort (the web port in Config.URL). Every
// change of them is material.
//
// # Concurrency
//
// A Role keeps no state that changes after New: its methods are safe for
// concurrent use, as agent.Role asks. It keeps at most one idle
// connection to the RM.
//
// # What it does not do
//
// It does not follow the active RM, read the scheduler or applications,
// or decide liveness (the agent does).
package yarnrole
