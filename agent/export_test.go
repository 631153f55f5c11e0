package agent

// Exited is the process watcher's news, for the tests of package
// agent_test that do not run a process.
var Exited = (*Agent).exited
