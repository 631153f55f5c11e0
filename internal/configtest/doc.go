// Package configtest checks a Config's Validate against a table of
// settings that cannot work: each must be refused with a
// *heureka.ConfigError naming its field (the field the CLI maps to its
// flag), and the good config must pass. Every package's config test uses
// it, so that they all hold their Validate to the same contract.
//
// # Concurrency
//
// Refuses holds no state; it calls Validate on copies of the config, one
// after another, on the caller's goroutine.
//
// # What it does not do
//
// It does not check the wording of a reason, nor that a config is refused
// for the case's reason rather than another of the same field; it copies
// configs shallowly (see Cases).
package configtest
