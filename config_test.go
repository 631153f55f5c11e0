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

// TestConfigNamed: a field goes by its name in names, a field of a list by
// its list's, a field the reason names is found beside the erring one
// before the top, an acronym in prose is left alone, a field without a
// name keeps its Go name, and other errors come back as they are.
func TestConfigNamed(t *testing.T) {
	names := map[string]string{"URLs": "--registry", "Gateway.FailoverWait": "--failover-wait",
		"Gateway.RequestTimeout": "--request-timeout", "RequestTimeout": "--wrong", "AuthFile": "--auth-file"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{InvalidConfig("URLs[2]", "x", "is not a URL"), `--registry "x": is not a URL`},
		{InvalidConfig("Gateway.FailoverWait", "1h", "is not less than RequestTimeout 15s"), `--failover-wait "1h": is not less than --request-timeout 15s`},
		{InvalidConfig("DNS.Allow", nil, "is empty while AuthFile is set"), "DNS.Allow: is empty while --auth-file is set"},
		{InvalidConfig("Clock", nil, "is nil; start from DefaultConfig"), "Clock: is nil; start from DefaultConfig"},
	} {
		got := ConfigNamed(c.err, names)
		if _, ok := errors.AsType[*ConfigError](got); !ok || got.Error() != c.want {
			t.Errorf("%v: got %v (%T), want a *ConfigError %q", c.err, got, got, c.want)
		}
	}
	plain := errors.New("not a config error")
	if ConfigNamed(plain, names) != plain || ConfigNamed(nil, names) != nil {
		t.Error("ConfigNamed changed an error that is not a *ConfigError")
	}
	inner := InvalidConfig("URLs[0]", "x", "bad")
	if ConfigNamed(inner, names); inner.Field != "URLs[0]" {
		t.Errorf("ConfigNamed changed its argument: %q", inner.Field)
	}
}
