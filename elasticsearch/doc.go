// Package elasticsearch is what heureka knows about an Elasticsearch node:
// its own description (GET /_nodes/_local: id, name, version, roles,
// attributes such as a rack attribute, HTTP publish address), its
// cluster's health (GET /_cluster/health) and the elected master with the
// cluster's UUID (GET /_cluster/state/master_node?local=true, answered
// from the node's own view of the cluster state). It holds no heureka
// registry client or server.
//
//   - ParseNodesLocal, ParseHealth and ParseMasterNode read the three
//     answers; Read asks all three, bounded in size (MaxAnswerBytes) and by
//     the caller's context, and refuses a node whose cluster UUID is not
//     the one expected.
//   - Node.Health and Node.RoleState: the rules are on the methods.
//
// Concurrency: every function is safe for concurrent use; the values are
// plain.
//
// What it does not do: read indices or shards, sniff other nodes, or
// decide liveness (a refused connection or a deadline is the caller's).
package elasticsearch
