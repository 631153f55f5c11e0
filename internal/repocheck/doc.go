// Package repocheck holds checks over the repository's own source that
// no compiler or vet pass makes, run as tests with the rest of the suite.
// It has no code of its own outside its tests.
package repocheck
