// Package tour holds end-to-end tests of what a new user does first, with
// real processes: the heureka binary is built (or taken from HEUREKA_BIN),
// `heureka demo` is started on free loopback ports, and the commands run
// are heureka's own command lines and curl, through bash.
//
//   - TestTour runs the README's five-minute tour as written: it reads
//     every command of the tour's sh blocks from ../../README.md, fills in
//     the placeholders (PORT, NN1PORT, LOCATION-FROM-ABOVE, ...) from what
//     the demo prints, runs them in order and checks what the README says
//     each prints. A command the test has no check for fails it, so an edit
//     to the tour is an edit to what is tested.
//   - TestHDFSSiteAcrossFailovers renders `heureka hadoop hdfs-site` before
//     and after two failovers and reads each file with a real consumer,
//     github.com/colinmarc/hdfs/v2's hadoopconf: a NameNode ID must name
//     the same host every time, and only the order of dfs.ha.namenodes
//     follows the active NameNode.
//
// It is a module of its own so that colinmarc/hdfs stays out of the
// product's go.mod. The tests need bash and curl; without them they skip,
// and in CI (CI=true) they fail. Each test starts one demo and stops it with
// Ctrl-C (SIGINT), as a user would; every wait is bounded.
package tour
