package eureka

// This file keeps the decoder that read every body through map[string]any,
// as it was before the typed decoder replaced it, so that
// TestDecoderMatchesOld and FuzzDecodersAgree can show the typed decoder
// accepts, rejects and produces exactly what it did.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// Decoding works in two steps. The body is parsed into a generic tree: JSON
// as encoding/json reads it into `any` (numbers kept as json.Number), XML
// converted to the same shape Eureka's JSON has, which is the XStream
// mapping: attributes become "@name" keys, the text of an element with
// attributes becomes "$", repeated elements become arrays. One set of
// lenient readers then turns the tree into heureka values, so JSON and XML
// accept exactly the same variations.

// oldDecodeInstance reads a registration body: {"instance":{...}} or the bare
// object in JSON, <instance>...</instance> in XML. It accepts every variation
// real clients send (eureka-spec §4.2): ports as numbers, strings or
// {"$":..,"@enabled":..}; numbers, timestamps and booleans as strings or
// numbers; overriddenstatus in either case; dataCenterInfo with or without
// @class. Missing fields get Eureka's defaults and unknown fields are
// ignored. Only renewalIntervalInSecs and durationInSecs are taken from
// leaseInfo: the registry owns the lease timestamps.
//
// The result has been normalised (heureka.Instance.Normalize) but not
// validated. Errors are EINVALID and say what is wrong and where.
func oldDecodeInstance(body []byte, f Format) (*heureka.Instance, error) {
	m, err := oldParseRoot(body, f, "instance")
	if err != nil {
		return nil, err
	}
	return oldInstanceFrom(m, false)
}

// oldDecodeServerInstance reads an instance as a server writes it (the answer
// to GET /apps/{APP}/{ID}, an instance in a watch event): as oldDecodeInstance
// does, but keeping the lease timestamps too.
func oldDecodeServerInstance(body []byte, f Format) (*heureka.Instance, error) {
	m, err := oldParseRoot(body, f, "instance")
	if err != nil {
		return nil, err
	}
	return oldInstanceFrom(m, true)
}

// oldDecodeApplication reads one application as EncodeApplication writes it,
// wrapped or not. A single instance written as an object instead of a
// one-element array is accepted. Instances are read in full (lease
// timestamps included) and normalised.
func oldDecodeApplication(body []byte, f Format) (*heureka.Application, error) {
	m, err := oldParseRoot(body, f, "application")
	if err != nil {
		return nil, err
	}
	return oldApplicationFrom(m, "application")
}

// oldDecodeApplications reads a registry listing as EncodeApplications writes
// it, wrapped or not, with the same leniency as oldDecodeApplication;
// versions__delta may be a string or a number.
func oldDecodeApplications(body []byte, f Format) (*heureka.Applications, error) {
	m, err := oldParseRoot(body, f, "applications")
	if err != nil {
		return nil, err
	}
	r := oldFields{m: m}
	apps := &heureka.Applications{
		VersionDelta: r.int("versions__delta", "versions_delta", 64),
		HashCode:     r.str("apps__hashcode", "apps_hashcode"),
	}
	if r.err != nil {
		return nil, r.err
	}
	for i, v := range oldAsList(m["application"]) {
		a, err := oldApplicationFrom(v, "application "+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		apps.Apps = append(apps.Apps, a)
	}
	return apps, nil
}

// oldApplicationFrom reads an application object; where names it in errors.
func oldApplicationFrom(v any, where string) (*heureka.Application, error) {
	m, err := oldAsObject(v, "application", false)
	if err != nil {
		return nil, context(where, err)
	}
	r := oldFields{m: m}
	app := &heureka.Application{Name: strings.ToUpper(r.str("name", ""))}
	if r.err != nil {
		return nil, context(where, r.err)
	}
	if app.Name != "" {
		where += " " + strconv.Quote(app.Name)
	}
	for i, v := range oldAsList(m["instance"]) {
		in, err := oldListedInstance(v)
		if err != nil {
			return nil, context(where+", instance "+strconv.Itoa(i), err)
		}
		app.Instances = append(app.Instances, in)
	}
	return app, nil
}

// oldListedInstance reads an instance of a listing: server output, so read in
// full.
func oldListedInstance(v any) (*heureka.Instance, error) {
	m, err := oldAsObject(v, "instance", false)
	if err != nil {
		return nil, err
	}
	return oldInstanceFrom(m, true)
}

// oldParseRoot parses body and returns the object inside the root wrapper
// named root. JSON may leave the wrapper out; XML must have it as its root
// element.
func oldParseRoot(body []byte, f Format, root string) (map[string]any, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if len(trimLeadingSpace(body)) == 0 {
		return nil, heureka.Errorf(heureka.EINVALID, "empty body")
	}
	switch f {
	case JSON:
		v, err := parseJSON(body)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, heureka.Errorf(heureka.EINVALID, "JSON body is %s, want an object such as {%q:{...}}", describe(v), root)
		}
		if inner, ok := m[root]; ok {
			if m, ok = inner.(map[string]any); !ok {
				return nil, heureka.Errorf(heureka.EINVALID, "%q must be an object, got %s", root, describe(inner))
			}
		}
		return m, nil
	case XML:
		v, err := parseXML(body, root)
		if err != nil {
			return nil, err
		}
		return oldAsObject(v, root, false)
	}
	return nil, heureka.Errorf(heureka.EINVALID, "unknown format %d", int(f))
}

// oldInstanceFrom reads an instance object. full also takes what only a
// server writes (lease timestamps); registrations leave them to the
// registry.
func oldInstanceFrom(m map[string]any, full bool) (*heureka.Instance, error) {
	r := oldFields{m: m}
	in := &heureka.Instance{
		ID:                   r.str("instanceId", ""),
		App:                  r.str("app", ""),
		AppGroupName:         r.str("appGroupName", ""),
		HostName:             r.str("hostName", ""),
		IPAddr:               r.str("ipAddr", ""),
		SID:                  r.str("sid", ""),
		Status:               heureka.Status(r.str("status", "")),
		OverriddenStatus:     heureka.Status(r.str("overriddenStatus", "overriddenstatus")),
		Port:                 r.port("port", heureka.Port{Number: heureka.DefaultPort, Enabled: true}),
		SecurePort:           r.port("securePort", heureka.Port{Number: heureka.DefaultSecurePort}),
		CountryID:            int(r.int("countryId", "", 32)),
		HomePageURL:          r.str("homePageUrl", ""),
		StatusPageURL:        r.str("statusPageUrl", ""),
		HealthCheckURL:       r.str("healthCheckUrl", ""),
		SecureHealthCheckURL: r.str("secureHealthCheckUrl", ""),
		VIPAddress:           r.str("vipAddress", ""),
		SecureVIPAddress:     r.str("secureVipAddress", ""),
		ASGName:              r.str("asgName", ""),
		LastUpdatedTimestamp: r.int("lastUpdatedTimestamp", "", 64),
		LastDirtyTimestamp:   r.int("lastDirtyTimestamp", "", 64),
		ActionType:           actionType(r.str("actionType", "")),
	}
	if !writeSID(in.SID) {
		in.SID = "" // "na" and "unknown" are Eureka's ways of saying none
	}
	in.IsCoordinatingDiscoveryServer = r.bool("isCoordinatingDiscoveryServer")
	in.Metadata = heureka.MetadataOf(r.metadata("metadata"))
	if dc := r.object("dataCenterInfo"); dc != nil {
		d := r.nested(dc, "dataCenterInfo.")
		in.DataCenter.Name = dataCenterName(d.str("name", ""), d.str("@class", ""))
		in.DataCenter.Metadata = heureka.MetadataOf(d.metadata("metadata"))
		r.err = d.err
	}
	if li := r.object("leaseInfo"); li != nil {
		l := r.nested(li, "leaseInfo.")
		in.Lease.RenewalIntervalSecs = int(l.int("renewalIntervalInSecs", "", 32))
		in.Lease.DurationSecs = int(l.int("durationInSecs", "", 32))
		if full {
			in.Lease.RegistrationTimestamp = l.int("registrationTimestamp", "", 64)
			in.Lease.LastRenewalTimestamp = l.int("lastRenewalTimestamp", "renewalTimestamp", 64)
			in.Lease.EvictionTimestamp = l.int("evictionTimestamp", "", 64)
			in.Lease.ServiceUpTimestamp = l.int("serviceUpTimestamp", "", 64)
		}
		r.err = l.err
	}
	if r.err != nil {
		return nil, r.err
	}
	// Spring Cloud puts a configured instance ID into metadata; its server
	// makes it unique per host.
	if id := in.Metadata.Get("instanceId"); in.ID == "" && id != "" {
		if !strings.HasPrefix(id, in.HostName) {
			id = in.HostName + ":" + id
		}
		in.ID = id
	}
	in.Normalize()
	return in, nil
}

// oldFields reads the members of one object. The first error is kept and
// later reads return zero values, so a reader is a plain sequence of calls
// followed by one check.
type oldFields struct {
	m    map[string]any
	path string // prefix for error messages, e.g. "leaseInfo."
	err  error
}

func (r *oldFields) nested(m map[string]any, path string) *oldFields {
	return &oldFields{m: m, path: r.path + path, err: r.err}
}

// get returns the member key, or alt when key is absent.
func (r *oldFields) get(key, alt string) (any, string) {
	if v, ok := r.m[key]; ok || alt == "" {
		return v, key
	}
	return r.m[alt], alt
}

func (r *oldFields) fail(key, want string, v any) {
	if r.err == nil {
		r.err = heureka.Errorf(heureka.EINVALID, "%q must be %s, got %s", r.path+key, want, describe(v))
	}
}

// str reads a string. Numbers and booleans are taken as their text, null as
// "".
func (r *oldFields) str(key, alt string) string {
	v, key := r.get(key, alt)
	s, ok := oldScalarText(v)
	if !ok {
		r.fail(key, "a string", v)
	}
	return s
}

// bool reads a boolean written as a boolean or a string; anything but
// "true" (in any case) is false.
func (r *oldFields) bool(key string) bool {
	v := r.m[key]
	s, ok := oldScalarText(v)
	if !ok {
		r.fail(key, `true or false`, v)
	}
	return strings.EqualFold(strings.TrimSpace(s), "true")
}

// int reads a whole number of the given bit size, written as a number or a
// string. Missing, null and "" are 0.
func (r *oldFields) int(key, alt string, bits int) int64 {
	v, key := r.get(key, alt)
	s, ok := oldScalarText(v)
	if !ok {
		r.fail(key, "a whole number", v)
		return 0
	}
	n, err := parseWhole(s, bits)
	if err != nil {
		r.fail(key, "a whole number of at most "+strconv.Itoa(bits)+" bits", v)
	}
	return n
}

// port reads a port given as a number, a string or {"$":n,"@enabled":b}.
// What is missing comes from def. An @enabled that is neither "true" nor
// "false" also means the default, as in Eureka's XML reader.
func (r *oldFields) port(key string, def heureka.Port) heureka.Port {
	v := r.m[key]
	const want = `a number, a string or {"$":..,"@enabled":..}`
	p := def
	num := v
	if m, ok := v.(map[string]any); ok {
		if len(m) == 0 {
			r.fail(key, want, v)
			return p
		}
		num = m["$"]
		if e, ok := m["@enabled"]; ok {
			s, ok := oldScalarText(e)
			if !ok {
				r.fail(key+".@enabled", `"true" or "false"`, e)
				return p
			}
			switch s = strings.TrimSpace(s); {
			case strings.EqualFold(s, "true"):
				p.Enabled = true
			case strings.EqualFold(s, "false"):
				p.Enabled = false
			}
		}
	}
	switch num.(type) {
	case nil, string, json.Number:
	default:
		r.fail(key, want, v)
		return p
	}
	s, _ := oldScalarText(num)
	if strings.TrimSpace(s) == "" {
		return p
	}
	n, err := parseWhole(s, 32)
	if err != nil {
		r.fail(key, want, v)
		return p
	}
	p.Number = int(n)
	return p
}

// object reads a member that must be an object; missing and null give nil.
func (r *oldFields) object(key string) map[string]any {
	v, ok := r.m[key]
	if !ok || v == nil {
		return nil
	}
	m, err := oldAsObject(v, r.path+key, true)
	if err != nil && r.err == nil {
		r.err = err
	}
	return m
}

// metadata reads a string map. "@class" (Java's type hint) and null values
// are dropped; numbers and booleans are taken as their text; an object or
// array value is an error naming the key.
func (r *oldFields) metadata(key string) map[string]string {
	m := r.object(key)
	if len(m) == 0 {
		return nil
	}
	md := make(map[string]string, len(m))
	for k, v := range m {
		if k == "@class" || v == nil {
			continue
		}
		s, ok := oldScalarText(v)
		if !ok {
			if r.err == nil {
				r.err = heureka.Errorf(heureka.EINVALID, "%s key %q must have a string, number or boolean value, got %s", r.path+key, k, describe(v))
			}
			return nil
		}
		md[k] = s
	}
	return md
}

// oldScalarText returns the text of a string, number, boolean or null, and
// also of an XML text node with attributes ({"$":text,"@attr":..}).
func oldScalarText(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case json.Number:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	case map[string]any:
		t, ok := v["$"]
		if !ok {
			return "", false
		}
		for k := range v {
			if k != "$" && !strings.HasPrefix(k, "@") {
				return "", false
			}
		}
		switch t := t.(type) {
		case string:
			return t, true
		case json.Number:
			return string(t), true
		}
	}
	return "", false
}

// oldAsObject returns v as an object. XML gives an empty element as a string
// of white space; lenient accepts that (and null) as an empty object.
func oldAsObject(v any, what string, lenient bool) (map[string]any, error) {
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return map[string]any{}, nil
		}
	case nil:
		if lenient {
			return map[string]any{}, nil
		}
	}
	return nil, heureka.Errorf(heureka.EINVALID, "%q must be an object, got %s", what, describe(v))
}

// oldAsList returns v as a list: Eureka lists may be written as an array or,
// with one element, as that element alone.
func oldAsList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}

// BenchmarkOldDecodeInstance is BenchmarkDecodeInstance for the old
// decoder, to be read side by side with it in one run.
func BenchmarkOldDecodeInstance(b *testing.B) {
	for _, f := range []Format{JSON, XML} {
		body := EncodeInstance(f, dataNodeInstance())
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := oldDecodeInstance(body, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// oldDecodeReplicationList is DecodeReplicationList as it was: the
// envelope through encoding/json, each instance through oldDecodeInstance.
func oldDecodeReplicationList(body []byte) ([]ReplicationItem, []error, error) {
	var env struct {
		List []wireItem `json:"replicationList"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		return nil, nil, heureka.Errorf(heureka.EINVALID, "malformed replication batch: %v", err)
	}
	items := make([]ReplicationItem, len(env.List))
	errs := make([]error, len(env.List))
	for i, w := range env.List {
		it := ReplicationItem{AppName: w.AppName, ID: w.ID, Action: w.Action,
			Status: heureka.LenientStatus(w.Status, ""), OverriddenStatus: heureka.LenientStatus(w.OverriddenStatus, "")}
		if w.LastDirtyTimestamp != "" {
			n, err := strconv.ParseInt(string(w.LastDirtyTimestamp), 10, 64)
			if err != nil {
				errs[i] = heureka.Errorf(heureka.EINVALID, "item %d: lastDirtyTimestamp %q is not an integer", i, w.LastDirtyTimestamp)
			}
			it.LastDirtyTimestamp = n
		}
		if len(w.InstanceInfo) > 0 && string(w.InstanceInfo) != "null" {
			in, err := oldDecodeInstance(w.InstanceInfo, JSON)
			if err != nil {
				errs[i] = err
			}
			it.Instance = in
		}
		items[i] = it
	}
	return items, errs, nil
}

// BenchmarkOldDecodeReplicationList is BenchmarkDecodeReplicationList for
// the old decoder.
func BenchmarkOldDecodeReplicationList(b *testing.B) {
	body := replicationBatchBody()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, errs, err := oldDecodeReplicationList(body); err != nil || errs[0] != nil {
			b.Fatal(err, errs[0])
		}
	}
}

// BenchmarkDecodeCPUSideBySide alternates the typed and the old decoder on
// the same bodies, in batches, and reports the process CPU time each batch
// took per decode (garbage collection included). On a shared machine the
// wall-clock time of a benchmark mostly measures the neighbours; CPU time
// measured in alternation is comparable between the two.
func BenchmarkDecodeCPUSideBySide(b *testing.B) {
	type sideCase = struct {
		name     string
		per      int // decodes per batch
		new, old func() error
	}
	var cases []sideCase
	for _, f := range []Format{JSON, XML} {
		body := EncodeInstance(f, dataNodeInstance())
		cases = append(cases, sideCase{"instance-" + f.String(), 50,
			func() error { _, err := DecodeInstance(body, f); return err },
			func() error { _, err := oldDecodeInstance(body, f); return err }})
	}
	batch := replicationBatchBody()
	cases = append(cases, sideCase{"replication-batch-100", 2,
		func() error { _, _, err := DecodeReplicationList(batch); return err },
		func() error { _, _, err := oldDecodeReplicationList(batch); return err }})
	listing := EncodeApplications(JSON, registry10k())
	cases = append(cases, sideCase{"applications-10k-json", 1,
		func() error { _, err := DecodeApplications(listing, JSON); return err },
		func() error { _, err := oldDecodeApplications(listing, JSON); return err }})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			per := c.per
			var tnew, told time.Duration
			for b.Loop() {
				for _, side := range []struct {
					fn  func() error
					sum *time.Duration
				}{{c.new, &tnew}, {c.old, &told}} {
					start := cpuTime(b)
					for range per {
						if err := side.fn(); err != nil {
							b.Fatal(err)
						}
					}
					*side.sum += cpuTime(b) - start
				}
			}
			n := float64(b.N * per)
			b.ReportMetric(float64(tnew.Nanoseconds())/n, "new-cpu-ns/op")
			b.ReportMetric(float64(told.Nanoseconds())/n, "old-cpu-ns/op")
			b.ReportMetric(float64(told)/float64(tnew), "old/new")
		})
	}
}

// cpuTime is the CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
