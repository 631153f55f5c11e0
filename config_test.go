package heureka

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestConfigError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{InvalidConfig("Listen", "", "is empty; give an address such as 127.0.0.1:8761"), `Listen "": is empty; give an address such as 127.0.0.1:8761`},
		{InvalidConfig("MaxQueue", -1, "must be at least 1"), "MaxQueue -1: must be at least 1"},
		{InvalidConfig("TLSCert, TLSKey", nil, "give both or neither"), "TLSCert, TLSKey: give both or neither"},
		{Positive(NamedDuration{"A", time.Second}, NamedDuration{"B", 0}, NamedDuration{"C", -1}), "B 0s: must be a positive duration"},
		{ConfigIn("Registry", Positive(NamedDuration{"DeltaRetention", -time.Minute})), "Registry.DeltaRetention -1m0s: must be a positive duration"},
	} {
		if c.err.Error() != c.want {
			t.Errorf("got %q, want %q", c.err, c.want)
		}
		if ErrorCode(c.err) != EINVALID || HTTPStatus(fmt.Errorf("wrapped: %w", c.err)) != 400 {
			t.Errorf("%q: code %q, want EINVALID (400) even when wrapped", c.err, ErrorCode(c.err))
		}
	}
	if err := Positive(NamedDuration{"A", time.Nanosecond}); err != nil {
		t.Errorf("a positive duration refused: %v", err)
	}
	plain := errors.New("not a config error")
	if ConfigIn("X", plain) != plain || ConfigIn("X", nil) != nil {
		t.Error("ConfigIn changed an error that is not a *ConfigError")
	}
	inner := InvalidConfig("Peers[1]", "ftp://x", "is not an http(s) URL")
	outer, _ := errors.AsType[*ConfigError](ConfigIn("Replication", inner))
	if outer.Field != "Replication.Peers[1]" || inner.Field != "Peers[1]" {
		t.Errorf("ConfigIn: outer field %q, inner %q; want the inner one unchanged", outer.Field, inner.Field)
	}
}

// TestLimitsValidate: each limit that cannot work is refused by its field.
func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	zero := Limits{MaxIDLength: 1, MaxFieldLength: 1, MaxMetadataKeyLen: 1}
	if err := zero.Validate(); err != nil {
		t.Errorf("no metadata allowed is a limit that works: %v", err)
	}
	for field, edit := range map[string]func(*Limits){
		"MaxIDLength":       func(l *Limits) { l.MaxIDLength = 0 },
		"MaxFieldLength":    func(l *Limits) { l.MaxFieldLength = -1 },
		"MaxMetadata":       func(l *Limits) { l.MaxMetadata = -1 },
		"MaxMetadataBytes":  func(l *Limits) { l.MaxMetadataBytes = -1 },
		"MaxMetadataKeyLen": func(l *Limits) { l.MaxMetadataKeyLen = 0 },
	} {
		l := DefaultLimits()
		edit(&l)
		if ce, ok := errors.AsType[*ConfigError](l.Validate()); !ok || ce.Field != field {
			t.Errorf("%s: %v", field, l.Validate())
		}
	}
}
