// Package kafka is what heureka knows about a Kafka broker, read through
// the Kafka protocol itself (brokers have no HTTP metrics without an
// exporter): ApiVersions for what the broker speaks and whether its
// cluster runs on KRaft, and Metadata (requested for no topics) for its
// node id, rack (broker.rack), advertised listener, cluster id and the
// controller id. It holds no heureka registry client or server.
//
//   - ParseApiVersions and ParseMetadata decode the responses' wire bytes
//     (kmsg, franz-go's message package) and check them; NewReport joins
//     them into a Report for one broker, found by its node id or, failing
//     that, by the address it was reached on.
//   - Probe asks a broker both questions through a franz-go client (kgo)
//     seeded with that broker alone, reading at most MaxAnswerBytes, and
//     refuses a broker of another cluster (its Metadata cluster id).
//   - Report.Health and Report.RoleState: the rules are on the methods.
//
// The controller: with ZooKeeper, Metadata's ControllerId is the
// controller broker. With KRaft (Kafka 3.3+, the only mode from 4.0) the
// controllers are a separate quorum and a broker answers Metadata with a
// random live broker as "controller" (KIP-590; KRaftMetadataCache), so
// this package does not call any broker the controller there: it reads
// KRaft from ApiVersions' finalized "metadata.version" feature and leaves
// Report.ControllerID at -1. Asking the quorum (DescribeQuorum, which a
// broker forwards to the controllers) is not done yet.
//
// Concurrency: every function is safe for concurrent use, Probe as far as
// its *kgo.Client is (kgo's clients are).
//
// What it does not do: produce, consume, read topics, or decide liveness
// (a refused connection or a deadline is the caller's).
package kafka
