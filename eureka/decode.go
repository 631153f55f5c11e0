package eureka

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heureka-project/heureka"
)

// Decoding works in two steps. The body is checked and made into nodes
// (node.go). JSON is checked once by scanJSON and then read in place. XML
// is seen in the shape Eureka's JSON has, which is the XStream mapping:
// attributes become "@name" keys, the text of an element with attributes
// becomes "$", repeated elements become arrays; plain XML is read so by
// scanXML into a flat table, any other XML is converted by parseXML into a
// tree of maps. One set of lenient readers then turns the nodes into
// heureka values, so JSON and XML accept exactly the same variations. The
// readers look up only the members they know (the key sets below);
// anything else is skipped without being decoded.

// DecodeInstance reads a registration body: {"instance":{...}} or the bare
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
func DecodeInstance(body []byte, f Format) (*heureka.Instance, error) {
	return decodeBody(body, f, "instance", func(n node) (*heureka.Instance, error) { return instanceFrom(n, false) })
}

// DecodeServerInstance reads an instance as a server writes it (the answer
// to GET /apps/{APP}/{ID}, an instance in a watch event): as DecodeInstance
// does, but keeping the lease timestamps too.
func DecodeServerInstance(body []byte, f Format) (*heureka.Instance, error) {
	return decodeBody(body, f, "instance", func(n node) (*heureka.Instance, error) { return instanceFrom(n, true) })
}

// DecodeApplication reads one application as EncodeApplication writes it,
// wrapped or not. A single instance written as an object instead of a
// one-element array is accepted. Instances are read in full (lease
// timestamps included) and normalised.
func DecodeApplication(body []byte, f Format) (*heureka.Application, error) {
	return decodeBody(body, f, "application", func(n node) (*heureka.Application, error) { return applicationFrom(n, "application") })
}

// DecodeApplications reads a registry listing as EncodeApplications writes
// it, wrapped or not, with the same leniency as DecodeApplication;
// versions__delta may be a string or a number.
func DecodeApplications(body []byte, f Format) (*heureka.Applications, error) {
	return decodeBody(body, f, "applications", applicationsFrom)
}

// decodeBody finds the object inside body's root wrapper and reads it with
// read. XML is first tried on the fast path (scanXML); if that gives up,
// or read finds an error there, the body is read again through parseXML,
// which decides and words every XML error.
func decodeBody[T any](body []byte, f Format, root string, read func(node) (T, error)) (T, error) {
	if f == XML {
		if n, ok := scanXML(body, root); ok {
			if n, err := asObject(n, root, false); err == nil {
				if v, err := read(n); err == nil {
					return v, nil
				}
			}
		}
	}
	n, err := parseRoot(body, f, root)
	if err != nil {
		var zero T
		return zero, err
	}
	return read(n)
}

// applicationsFrom reads a registry listing object.
func applicationsFrom(n node) (*heureka.Applications, error) {
	r := newFields(n, applicationsKeys, "")
	apps := &heureka.Applications{
		VersionDelta: r.int("versions__delta", "versions_delta", 64),
		HashCode:     r.str("apps__hashcode", "apps_hashcode"),
	}
	if r.err != nil {
		return nil, r.err
	}
	var err error
	if apps.Apps, err = readListed(r.get1("application"), "application", applicationFrom); err != nil {
		return nil, err
	}
	return apps, nil
}

// applicationFrom reads an application object; where names it in errors.
func applicationFrom(v node, where string) (*heureka.Application, error) {
	n, err := asObject(v, "application", false)
	if err != nil {
		return nil, context(where, err)
	}
	r := newFields(n, applicationKeys, "")
	app := &heureka.Application{Name: strings.ToUpper(r.str("name", ""))}
	if r.err != nil {
		return nil, context(where, r.err)
	}
	if app.Name != "" {
		where += " " + strconv.Quote(app.Name)
	}
	app.Instances, err = readListed(r.get1("instance"), where+", instance", func(v node, label string) (*heureka.Instance, error) {
		in, err := listedInstance(v)
		if err != nil {
			return nil, context(label, err)
		}
		return in, nil
	})
	if err != nil {
		return nil, err
	}
	return app, nil
}

// listedInstance reads an instance of a listing: server output, so read in
// full.
func listedInstance(v node) (*heureka.Instance, error) {
	n, err := asObject(v, "instance", false)
	if err != nil {
		return nil, err
	}
	return instanceFrom(n, true)
}

// parseRoot parses body and returns the object inside the root wrapper
// named root. JSON may leave the wrapper out; XML must have it as its root
// element.
func parseRoot(body []byte, f Format, root string) (node, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if len(trimLeadingSpace(body)) == 0 {
		return node{}, heureka.Errorf(heureka.EINVALID, "empty body")
	}
	switch f {
	case JSON:
		if !scanJSON(body) {
			_, err := parseJSON(body)
			if err == nil { // cannot happen: scanJSON and encoding/json agree
				err = heureka.Errorf(heureka.EINVALID, "malformed JSON")
			}
			return node{}, err
		}
		n := jsonNode(bytes.Trim(body, " \t\r\n"))
		if n.kind() != kObject {
			return node{}, heureka.Errorf(heureka.EINVALID, "JSON body is %s, want an object such as {%q:{...}}", describe(n.value()), root)
		}
		var inner node
		n.each(func(k memberKey, v node) bool {
			if k.is(root) {
				inner = v
			}
			return true
		})
		if inner.ok {
			if inner.kind() != kObject {
				return node{}, heureka.Errorf(heureka.EINVALID, "%q must be an object, got %s", root, describe(inner.value()))
			}
			return inner, nil
		}
		return n, nil
	case XML:
		v, err := parseXML(body, root)
		if err != nil {
			return node{}, err
		}
		return asObject(treeNode(v), root, false)
	}
	return node{}, heureka.Errorf(heureka.EINVALID, "unknown format %d", int(f))
}

func parseJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, heureka.Errorf(heureka.EINVALID, "malformed JSON at byte %d: %v", se.Offset, se)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return nil, heureka.Errorf(heureka.EINVALID, "malformed JSON: the body ends in the middle of a value")
		}
		return nil, heureka.Errorf(heureka.EINVALID, "malformed JSON: %v", err)
	}
	off := dec.InputOffset()
	if rest := trimLeadingSpace(body[off:]); len(rest) > 0 {
		return nil, heureka.Errorf(heureka.EINVALID, "malformed JSON at byte %d: %q after the top-level value", off, prefix(rest, 16))
	}
	return v, nil
}

// instanceFrom reads an instance object. full also takes what only a
// server writes (lease timestamps); registrations leave them to the
// registry.
func instanceFrom(n node, full bool) (*heureka.Instance, error) {
	r := newFields(n, instanceKeys, "")
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
	in.Metadata = r.metadata("metadata")
	if dc, ok := r.object("dataCenterInfo"); ok {
		d := r.nested(dc, dataCenterKeys, "dataCenterInfo.")
		in.DataCenter.Name = dataCenterName(d.str("name", ""), d.str("@class", ""))
		in.DataCenter.Metadata = d.metadata("metadata")
		r.err = d.err
	}
	if li, ok := r.object("leaseInfo"); ok {
		l := r.nested(li, leaseKeys, "leaseInfo.")
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

// dataCenterName canonicalises a data-centre name, inferring Amazon from
// the class when the name is missing. Normalize turns anything unknown into
// MyOwn.
func dataCenterName(name, class string) string {
	for _, known := range []string{heureka.DataCenterAmazon, heureka.DataCenterNetflix, heureka.DataCenterMyOwn} {
		if strings.EqualFold(strings.TrimSpace(name), known) {
			return known
		}
	}
	if name == "" && strings.HasSuffix(class, ".AmazonInfo") {
		return heureka.DataCenterAmazon
	}
	return name
}

func actionType(s string) heureka.ActionType {
	switch a := heureka.ActionType(strings.ToUpper(strings.TrimSpace(s))); a {
	case heureka.ActionAdded, heureka.ActionModified, heureka.ActionDeleted:
		return a
	}
	return ""
}

// keySet is the member names one kind of object has that the readers look
// at; every other member is skipped.
type keySet map[string]int

func newKeySet(names ...string) keySet {
	if len(names) > maxKeys {
		panic("eureka: a key set has more than maxKeys names")
	}
	ks := make(keySet, len(names))
	for i, n := range names {
		ks[n] = i
	}
	return ks
}

// maxKeys bounds the size of a keySet, so that a fields fits on the stack.
const maxKeys = 28

var (
	instanceKeys = newKeySet("instanceId", "app", "appGroupName", "hostName", "ipAddr", "sid", "status",
		"overriddenStatus", "overriddenstatus", "port", "securePort", "countryId", "homePageUrl",
		"statusPageUrl", "healthCheckUrl", "secureHealthCheckUrl", "vipAddress", "secureVipAddress",
		"asgName", "lastUpdatedTimestamp", "lastDirtyTimestamp", "actionType",
		"isCoordinatingDiscoveryServer", "metadata", "dataCenterInfo", "leaseInfo")
	dataCenterKeys = newKeySet("name", "@class", "metadata")
	leaseKeys      = newKeySet("renewalIntervalInSecs", "durationInSecs", "registrationTimestamp",
		"lastRenewalTimestamp", "renewalTimestamp", "evictionTimestamp", "serviceUpTimestamp")
	applicationKeys  = newKeySet("name", "instance")
	applicationsKeys = newKeySet("versions__delta", "versions_delta", "apps__hashcode", "apps_hashcode", "application")
)

// fields reads the members of one object. It is filled in one pass over
// the object, keeping the last value of each member named in its keySet.
// The first error is kept and later reads return zero values, so a reader
// is a plain sequence of calls followed by one check; the order of the
// calls, not of the members, decides which error is reported.
type fields struct {
	keys keySet
	vals [maxKeys]node
	path string // prefix for error messages, e.g. "leaseInfo."
	err  error
}

// newFields reads the members of object n (an absent node is an empty
// object) named in keys.
func newFields(n node, keys keySet, path string) fields {
	r := fields{keys: keys, path: path}
	if n.ok {
		n.each(func(k memberKey, v node) bool {
			var i int
			var ok bool
			if k.b != nil {
				i, ok = keys[string(k.b)]
			} else {
				i, ok = keys[k.s]
			}
			if ok {
				r.vals[i] = v
			}
			return true
		})
	}
	return r
}

func (r *fields) nested(n node, keys keySet, path string) fields {
	if r.path != "" {
		path = r.path + path
	}
	d := newFields(n, keys, path)
	d.err = r.err
	return d
}

// get1 returns the member key, absent or not.
func (r *fields) get1(key string) node {
	i, ok := r.keys[key]
	if !ok {
		panic("eureka: member " + key + " is not in the key set")
	}
	return r.vals[i]
}

// get returns the member key, or alt when key is absent.
func (r *fields) get(key, alt string) (node, string) {
	if v := r.get1(key); v.ok || alt == "" {
		return v, key
	}
	return r.get1(alt), alt
}

func (r *fields) fail(key, want string, v node) {
	if r.err == nil {
		r.err = heureka.Errorf(heureka.EINVALID, "%q must be %s, got %s", r.path+key, want, describe(v.value()))
	}
}

// str reads a string. Numbers and booleans are taken as their text, null as
// "".
func (r *fields) str(key, alt string) string {
	v, key := r.get(key, alt)
	s, ok := scalarText(v)
	if !ok {
		r.fail(key, "a string", v)
	}
	return s
}

// bool reads a boolean written as a boolean or a string; anything but
// "true" (in any case) is false.
func (r *fields) bool(key string) bool {
	v := r.get1(key)
	if v.json != nil {
		switch v.json[0] {
		case 't':
			return true
		case 'f', 'n':
			return false
		}
	}
	s, ok := scalarView(v)
	if !ok {
		r.fail(key, `true or false`, v)
	}
	return strings.EqualFold(strings.TrimSpace(s), "true")
}

// int reads a whole number of the given bit size, written as a number or a
// string. Missing, null and "" are 0.
func (r *fields) int(key, alt string, bits int) int64 {
	v, key := r.get(key, alt)
	if v.json != nil {
		if n, ok := jsonWhole(v.json, bits); ok {
			return n
		}
	}
	s, ok := scalarView(v)
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
func (r *fields) port(key string, def heureka.Port) heureka.Port {
	v := r.get1(key)
	const want = `a number, a string or {"$":..,"@enabled":..}`
	p := def
	num := v
	if v.kind() == kObject {
		var enabled node
		num = node{}
		empty := true
		v.each(func(k memberKey, m node) bool {
			empty = false
			switch {
			case k.is("$"):
				num = m
			case k.is("@enabled"):
				enabled = m
			}
			return true
		})
		if empty {
			r.fail(key, want, v)
			return p
		}
		if enabled.ok {
			s, ok := scalarView(enabled)
			if !ok {
				r.fail(key+".@enabled", `"true" or "false"`, enabled)
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
	switch num.kind() {
	case kAbsent, kNull, kString, kNumber:
	default:
		r.fail(key, want, v)
		return p
	}
	if num.json != nil {
		if n, ok := jsonWhole(num.json, 32); ok {
			p.Number = int(n)
			return p
		}
	}
	s, _ := scalarView(num)
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

// object reads a member that must be an object; ok is false when it is
// missing or null.
func (r *fields) object(key string) (n node, ok bool) {
	v := r.get1(key)
	if k := v.kind(); k == kAbsent || k == kNull {
		return node{}, false
	}
	n, err := asObject(v, r.path+key, true)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, true
}

// metadata reads a string map. "@class" (Java's type hint) and null values
// are dropped; numbers and booleans are taken as their text; an object or
// array value is an error naming the key. A key given more than once
// counts with its last value.
func (r *fields) metadata(key string) heureka.Metadata {
	n, ok := r.object(key)
	if !ok || !n.ok {
		return heureka.Metadata{}
	}
	size := n.size()
	if size == 0 {
		return heureka.Metadata{}
	}
	// Pairs, in order, which NewMetadata reduces to each key's last value.
	// A null or a bad value removes a key, which wants a map; only such a
	// body pays for one. Keys and values are views into the body where they
	// need no decoding (memberKey.view, scalarView): NewMetadata copies
	// them all into its own block, and an error message copies the key it
	// names, so none outlives the decode.
	kv := make([]string, 0, 2*size)
	var md map[string]string
	remove := func(name string) {
		if md == nil {
			md = make(map[string]string, size)
			for i := 0; i < len(kv); i += 2 {
				md[kv[i]] = kv[i+1]
			}
		}
		delete(md, name)
	}
	var bad []string // keys whose (last) value is not a scalar, in order
	var badVals map[string]node
	n.each(func(k memberKey, v node) bool {
		if k.is("@class") {
			return true
		}
		name := k.view()
		if badVals != nil {
			delete(badVals, name)
		}
		if v.kind() == kNull {
			remove(name)
			return true
		}
		s, ok := scalarView(v)
		if !ok {
			if badVals == nil {
				badVals = map[string]node{}
			}
			badVals[name] = v
			bad = append(bad, name)
			remove(name)
			return true
		}
		if md != nil {
			md[name] = s
		} else {
			kv = append(kv, name, s)
		}
		return true
	})
	for _, k := range bad {
		if v, still := badVals[k]; still {
			if r.err == nil {
				r.err = heureka.Errorf(heureka.EINVALID, "%s key %q must have a string, number or boolean value, got %s", r.path+key, k, describe(v.value()))
			}
			return heureka.Metadata{}
		}
	}
	if md != nil {
		return heureka.MetadataOf(md)
	}
	return heureka.NewMetadata(kv...)
}

// scalarText returns the text of a string, number, boolean or null, and
// also of an XML text node with attributes ({"$":text,"@attr":..}).
func scalarText(v node) (string, bool) { return scalar(v, node.text) }

// scalarView is scalarText, with JSON text that needs no decoding viewed
// in the body instead of copied (node.textView): for a value that is
// parsed, compared or copied before the decode returns, never kept.
func scalarView(v node) (string, bool) { return scalar(v, node.textView) }

func scalar(v node, text func(node) string) (string, bool) {
	switch v.kind() {
	case kAbsent, kNull:
		return "", true
	case kString, kNumber, kBool:
		return text(v), true
	case kObject:
		var t node
		plain := true
		v.each(func(k memberKey, m node) bool {
			switch {
			case k.is("$"):
				t = m
			case !k.hasAtPrefix():
				plain = false
			}
			return true
		})
		if !plain || !t.ok {
			return "", false
		}
		switch t.kind() {
		case kString, kNumber:
			return text(t), true
		}
	}
	return "", false
}

// parseWhole parses a whole number that fits in bits bits. Integral values
// written in floating-point notation ("8080.0", "1e3") are accepted; "" is 0.
func parseWhole(s string, bits int) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return n, nil
	}
	f, ferr := strconv.ParseFloat(s, 64)
	limit := math.Ldexp(1, bits-1)
	if ferr != nil || f != math.Trunc(f) || f < -limit || f >= limit {
		return 0, err
	}
	return int64(f), nil
}

// emptyObject is what an empty element or a blank string reads as where an
// object is wanted: an object with no members, so that reading it a second
// time (as decodeBody and applicationFrom both do) still gives an object.
var emptyObject = node{json: []byte("{}"), ok: true}

// asObject returns v as an object. XML gives an empty element as a string
// of white space, which reads as emptyObject; lenient also accepts null
// (and an absent member) as an absent node: every member read from it is
// absent.
func asObject(v node, what string, lenient bool) (node, error) {
	switch v.kind() {
	case kObject:
		return v, nil
	case kString:
		if strings.TrimSpace(v.text()) == "" {
			return emptyObject, nil
		}
	case kNull, kAbsent:
		if lenient {
			return node{}, nil
		}
	}
	return node{}, heureka.Errorf(heureka.EINVALID, "%q must be an object, got %s", what, describe(v.value()))
}

// readListed reads each element of a Eureka list (see eachListed) with
// read, which is given the element's label for errors: what and its index.
func readListed[T any](v node, what string, read func(v node, label string) (T, error)) ([]T, error) {
	var out []T
	var err error
	eachListed(v, func(v node) bool {
		var t T
		if t, err = read(v, what+" "+strconv.Itoa(len(out))); err != nil {
			return false
		}
		out = append(out, t)
		return true
	})
	return out, err
}

// eachListed calls fn with each element of a Eureka list, which may be
// written as an array or, with one element, as that element alone.
func eachListed(v node, fn func(v node) bool) {
	switch v.kind() {
	case kAbsent, kNull:
	case kArray:
		v.elems(fn)
	default:
		fn(v)
	}
}

// describe renders a decoded value for an error message, as compact JSON
// shortened to about 60 bytes.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "a value that cannot be shown"
	}
	if len(b) > 60 {
		n := 57
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		return string(b[:n]) + "…"
	}
	return string(b)
}

func context(where string, err error) error {
	var e *heureka.Error
	if errors.As(err, &e) {
		return heureka.Errorf(e.Code, "%s: %s", where, e.Message)
	}
	return err
}
