package heureka

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ConfigError says which setting of a Config cannot work: the field, as
// the Go struct names it (dotted for a nested config, "Registry.
// DeltaRetention", and indexed for a list, "URLs[2]"), the value it holds,
// and why it cannot work. Every package's Config.Validate returns one, so
// that a program can tell its users what they typed wrong in their own
// terms: the CLI maps Field to its flag (cmd/heureka), a config file to
// its key. Its code is EINVALID.
type ConfigError struct {
	Field string
	// Value is the setting's value as given; nil when the reason is about
	// the field's absence or about several fields at once.
	Value  any
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Value == nil {
		return e.Field + ": " + e.Reason
	}
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("%s %q: %s", e.Field, s, e.Reason)
	}
	return fmt.Sprintf("%s %v: %s", e.Field, e.Value, e.Reason)
}

// InvalidConfig returns a *ConfigError for field holding value.
func InvalidConfig(field string, value any, format string, args ...any) *ConfigError {
	return &ConfigError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// Positive returns a *ConfigError for the first of the named durations
// that is not above zero, or nil: the check every Config makes of its
// periods and timeouts.
func Positive(durations ...NamedDuration) error {
	for _, d := range durations {
		if d.Value <= 0 {
			return &ConfigError{Field: d.Field, Value: d.Value, Reason: "must be a positive duration"}
		}
	}
	return nil
}

// NamedDuration is a duration setting with its field's name, for Positive.
type NamedDuration struct {
	Field string
	Value time.Duration
}

// ConfigIn returns err with prefix and a dot before its field when err is
// a *ConfigError, as a Config that embeds another (server.Config holds a
// registry.Config as Registry) reports the inner one's; other errors and
// nil come back as they are.
func ConfigIn(prefix string, err error) error {
	ce, ok := errors.AsType[*ConfigError](err)
	if !ok {
		return err
	}
	out := *ce
	out.Field = prefix + "." + ce.Field
	return &out
}

// ConfigNamed returns err with its field, and every field its reason
// names, called as names says (a CLI maps fields to its flags, a config
// file to its keys) when err is a *ConfigError; other errors and nil come
// back as they are. A field of a list, URLs[2], goes by its list's name; a
// field the reason names is looked up beside the erring one first
// (Gateway.RequestTimeout for a Gateway.FailoverWait whose reason names
// RequestTimeout), then at the top. A field names lacks keeps its Go name.
func ConfigNamed(err error, names map[string]string) error {
	ce, ok := errors.AsType[*ConfigError](err)
	if !ok {
		return err
	}
	out := *ce
	field, _, _ := strings.Cut(ce.Field, "[")
	if n, ok := names[field]; ok {
		out.Field = n
	}
	parent := field[:strings.LastIndex(field, ".")+1] // "Gateway." or ""
	out.Reason = fieldWord.ReplaceAllStringFunc(ce.Reason, func(word string) string {
		if n, ok := names[parent+word]; ok {
			return n
		}
		if n, ok := names[word]; ok {
			return n
		}
		return word
	})
	return &out
}

// fieldWord matches a word a reason may name a field by: an exported Go
// identifier with a lower-case letter in it (RenewInterval, Capacity), so
// that an acronym in prose ("not a URL") is left alone.
var fieldWord = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*\b`)
