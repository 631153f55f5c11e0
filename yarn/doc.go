// Package yarn is what heureka knows about a YARN ResourceManager: its
// cluster-information answer (GET /ws/v1/cluster/info), its HA state and
// ZooKeeper connection, the cluster id it serves, and what makes it
// healthy. It holds no heureka registry client or server.
//
//   - ParseClusterInfo reads the /ws/v1/cluster/info JSON into a
//     ResourceManager: haState (INITIALIZING, ACTIVE, STANDBY, OBSERVER,
//     STOPPING), the service state, haZooKeeperConnectionState read into a
//     ZKConnection, and the versions. A standby answers this URI itself
//     rather than redirecting to the active (RMWebAppFilter), which is why
//     it is the one to probe.
//   - ParseConfProperty reads Hadoop's /conf?name=KEY answer, where the RM's
//     yarn.resourcemanager.cluster-id comes from: the cluster info's "id" is
//     only the RM's start time and says nothing about which cluster it
//     belongs to.
//   - Read does both GETs with a deadline and a size bound (MaxAnswerBytes)
//     and refuses an RM that answers for another cluster.
//   - ResourceManager.Health says whether the RM can do its job; the rules
//     are on that method. RoleState is "active" or "standby" (lower case).
//
// Concurrency: every function is safe for concurrent use; a
// ResourceManager is a plain value.
//
// What it does not do: decide liveness (a refused connection or a deadline
// is the caller's to judge), follow the active RM, or read the scheduler.
package yarn
