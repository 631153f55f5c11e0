// Package eureka is the Eureka wire codec: instances, applications and
// registry listings in JSON and XML, written exactly as Netflix's Eureka
// server writes them and read as leniently as real clients send them, and
// the peer replication batch and its answers in JSON (ReplicationItem,
// EncodeReplicationList, DecodeReplicationList, ReplicationResult).
//
// # Output
//
// Encoders write the shapes every known reader accepts, including the
// strictest one (Spring Cloud's plain Jackson reader): root wrappers
// ({"applications":...}, <instance>...), ports as {"$":8080,"@enabled":"true"},
// dataCenterInfo with its @class, empty metadata as Java's EmptyMap marker,
// versions__delta and apps__hashcode as strings, lists always as arrays, and
// fields in the Java server's order (eureka-spec §4.1). Output is canonical:
// only the keys Eureka defines, statuses, action types and data-centre names
// only from their closed sets (anything else becomes UNKNOWN, is left out,
// or becomes MyOwn), metadata sorted by key, so the same Instance always
// gives the same bytes and one odd registrant cannot break every client's
// fetch. Every Instance value encodes to valid JSON and well-formed XML:
// invalid UTF-8, and in XML the characters XML 1.0 forbids, are replaced by
// U+FFFD. In XML, metadata keys are escaped as XStream does ('_' as "__",
// '$' as "_-"), and keys that still cannot be element names are left out
// (see ValidXMLMetadataKey); JSON carries every key.
//
// The instance and listing encoders append to byte slices without
// reflection: the server encodes listings on its read path. A batch's
// envelope, written once per batch, goes through encoding/json.
//
// # Input
//
// Decoders accept every variation of eureka-spec §4.2 and client-quirks.md:
// wrapped or bare objects, ports as numbers, strings or objects, numbers
// and booleans as strings, overriddenstatus in either case, dataCenterInfo
// without @class or with any name, a single object where a list is
// expected. Unknown fields are ignored and never kept. Decoded instances
// are normalised (heureka.Instance.Normalize) but not validated: that is the
// registry's job. Errors are heureka EINVALID errors whose message names
// the problem and the field. XML with a DOCTYPE is refused and entities are
// never expanded.
//
// Decoders build no generic tree. JSON is checked once against
// encoding/json's grammar and nesting bound by a small scanner, then read
// in place: only the members the readers know are decoded, the rest are
// skipped. Strings with escapes or invalid UTF-8 are decoded by
// encoding/json, so they mean what they meant (invalid UTF-8 becomes
// U+FFFD), and every JSON syntax error is worded by encoding/json. Plain
// XML (ASCII, no comments, CDATA, namespaces or declarations other than
// version 1.0 in UTF-8: what fargo, XStream and heureka's encoder write) is
// read by a scanner of its own into a flat table of elements; any other
// XML, and any XML body with an error, goes through encoding/xml, which
// decides and words every XML error. Replication batches as peers send
// them are read with the JSON scanner; a batch that uses encoding/json's
// struct rules (names matching only ignoring case, repeated members,
// nulls) goes through encoding/json. Both paths of each format give the
// same result for every body: a differential test and fuzz target check
// the decoders against the map[string]any decoder they replaced, kept in
// a test file.
//
// # Concurrency
//
// Every function is pure: it reads its arguments, keeps nothing and may be
// called from any number of goroutines, as long as the values passed in are
// not being modified meanwhile.
//
// # What it does not do
//
// No HTTP: content negotiation stops at FormatFor and SniffFormat, and
// gzip, body-size limits and error bodies belong to the HTTP layer. No
// validation against limits, no hash-code computation (see
// heureka.ReconcileHashCode), and no compact (X-Eureka-Accept) output.
package eureka
