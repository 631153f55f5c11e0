// Package zookeeper is what heureka knows about a ZooKeeper server: its
// mntr answer (from the AdminServer's GET /commands/mntr or the mntr
// four-letter word), the server's role in its ensemble, the ensemble it
// belongs to, and what makes it healthy. It holds no heureka registry
// client or server.
//
//   - ParseAdminMntr reads the AdminServer's JSON and ParseMntr the
//     four-letter word's "zk_key<TAB>value" lines into the same Mntr:
//     server_state (leader, follower, observer, standalone, read-only),
//     version, outstanding requests, znodes, connections and, on a leader,
//     its learners and synced followers.
//   - A server that is up but has no quorum (it lost its leader and an
//     election is under way) does not serve mntr: ZooKeeper 3.8's
//     AdminServer answers HTTP 500 (a NullPointerException page) and the
//     four-letter word "This ZooKeeper instance is not currently serving
//     requests"; /commands/srvr answers that sentence as JSON. Read and
//     ParseMntr turn these into a Mntr in state StateNotServing, which is
//     an answer, not a dead daemon.
//   - ZooKeeper has no cluster id. What names an ensemble is its voting
//     members, as /commands/voting_view lists them; ParseVotingView reads
//     them and Ensemble.Matches compares them with the members a caller
//     expects, so that a server of another ensemble is refused.
//   - Mntr.Health decides whether the server serves its ensemble; the
//     rules are on that method. RoleState is the server state.
//
// Read does the HTTP exchange against an AdminServer, bounded in size
// (MaxAnswerBytes) and by the caller's context.
//
// Concurrency: every function is safe for concurrent use; the values are
// plain.
//
// What it does not do: open a ZooKeeper client session, read znodes, or
// decide liveness (a refused connection or a deadline is the caller's).
// Package zktest starts real ZooKeeper servers for tests.
package zookeeper
