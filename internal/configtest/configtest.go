package configtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

// Cases are the settings that cannot work, each an edit that spoils a copy
// of the good config, keyed by the field the *heureka.ConfigError must
// name (dotted for a nested config, "Registry.DeltaRetention"; indexed for
// a list, "URLs[0]"), then optionally a space and what the edit does, to
// tell apart two edits of one field: "StormRate NaN". An edit gets a
// shallow copy: it must replace a map or slice it changes, not write into
// it.
type Cases[C any] map[string]func(*C)

// Refuses fails t unless good validates and every case's config is
// refused with a *heureka.ConfigError whose Field is the case's.
func Refuses[C interface{ Validate() error }](t testing.TB, good C, cases Cases[C]) {
	t.Helper()
	if err := good.Validate(); err != nil {
		t.Fatalf("the good config: %v", err)
	}
	for key, edit := range cases {
		field, _, _ := strings.Cut(key, " ")
		cfg := good
		edit(&cfg)
		err := cfg.Validate()
		if ce, ok := errors.AsType[*heureka.ConfigError](err); !ok || ce.Field != field {
			t.Errorf("%s: got %v (%T); want a *heureka.ConfigError naming %s", key, err, err, field)
		}
	}
}
