package hdfs

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/jmxjson"
)

// MaxJMXBytes bounds how much of a /jmx response the parsers read. A full
// NameNode dump of a large cluster is a few megabytes (LiveNodes grows with
// the DataNode count); anything past this bound is refused, not truncated.
const MaxJMXBytes = 64 << 20

// attrs is one JSON object: a bean, or an object decoded from an attribute.
type attrs map[string]json.RawMessage

// jmxBean is a bean from a /jmx response with its ObjectName taken apart.
type jmxBean struct {
	name   string            // the full ObjectName, e.g. "Hadoop:service=DataNode,name=FSDatasetState"
	domain string            // "Hadoop"
	props  map[string]string // {"service": "DataNode", "name": "FSDatasetState"}
	attrs  attrs
}

// readBeans reads a /jmx response: {"beans": [...]} as the servlet writes
// it, a bare bean object (as some tools save a single bean) or a bare array
// of beans. Beans that are not JSON objects are skipped. The body is
// sanitised first (see sanitizeJSON).
func readBeans(r io.Reader) ([]jmxBean, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxJMXBytes+1))
	if err != nil {
		return nil, heureka.Errorf(heureka.EUNAVAILABLE, "reading jmx response: %v", err)
	}
	if len(body) > MaxJMXBytes {
		return nil, heureka.Errorf(heureka.ETOOLARGE, "jmx response is larger than %d bytes", MaxJMXBytes)
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	body = sanitizeJSON(body)
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, heureka.Errorf(heureka.EINVALID, "jmx response is empty")
	}
	var raws []json.RawMessage
	switch trimmed[0] {
	case '[':
		if err := json.Unmarshal(body, &raws); err != nil {
			return nil, jsonError(err)
		}
	case '{':
		var top attrs
		if err := json.Unmarshal(body, &top); err != nil {
			return nil, jsonError(err)
		}
		if res, _ := top.str("result"); strings.EqualFold(res, "ERROR") {
			msg, _ := top.str("message")
			return nil, heureka.Errorf(heureka.EINVALID, "jmx servlet answered with an error: %s", msg)
		}
		switch {
		case top["beans"] != nil:
			if !isNull(top["beans"]) {
				if err := json.Unmarshal(top["beans"], &raws); err != nil {
					return nil, heureka.Errorf(heureka.EINVALID, "jmx response: \"beans\" is not an array")
				}
			}
		case top["name"] != nil:
			raws = []json.RawMessage{json.RawMessage(body)}
		default:
			return nil, heureka.Errorf(heureka.EINVALID, "jmx response has neither \"beans\" nor a bean \"name\"")
		}
	default:
		return nil, heureka.Errorf(heureka.EINVALID, "jmx response is not a JSON object or array")
	}
	beans := make([]jmxBean, 0, len(raws))
	for _, raw := range raws {
		var a attrs
		if json.Unmarshal(raw, &a) != nil || a == nil {
			continue
		}
		name, _ := a.str("name")
		domain, props := parseObjectName(name)
		beans = append(beans, jmxBean{name: name, domain: domain, props: props, attrs: a})
	}
	return beans, nil
}

func jsonError(err error) error {
	return heureka.Errorf(heureka.EINVALID, "jmx response is not valid JSON: %v", err)
}

// parseObjectName splits a JMX ObjectName "domain:k1=v1,k2=v2". Quoted
// values are not unquoted; Hadoop's names do not use them.
func parseObjectName(s string) (string, map[string]string) {
	domain, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", nil
	}
	props := map[string]string{}
	for kv := range strings.SplitSeq(rest, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			props[k] = v
		}
	}
	return domain, props
}

// hadoopBeans indexes the beans of one Hadoop service ("DataNode",
// "NameNode") by their name property.
type hadoopBeans map[string]attrs

func indexBeans(beans []jmxBean, service string) hadoopBeans {
	idx := hadoopBeans{}
	for _, b := range beans {
		if b.domain != "Hadoop" || b.props["service"] != service || len(b.props) != 2 {
			continue
		}
		name := b.props["name"]
		if _, dup := idx[name]; !dup && name != "" {
			idx[name] = b.attrs
		}
	}
	return idx
}

// withPrefix returns the bean named exactly prefix if there is one, else the
// first (by name) named prefix + "-" + anything; nil if neither exists.
func (h hadoopBeans) withPrefix(prefix string) attrs {
	if a, ok := h[prefix]; ok {
		return a
	}
	var names []string
	for n := range h {
		if strings.HasPrefix(n, prefix+"-") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return h[names[0]]
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// str returns a string attribute; a number or boolean comes back as its
// JSON text. Absent, null, objects and arrays give ok=false.
func (a attrs) str(key string) (string, bool) {
	raw, ok := a[key]
	if !ok || isNull(raw) {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case '{', '[':
		return "", false
	}
	return string(raw), true
}

// int returns an integer attribute given as a JSON number (integral or not,
// truncated toward zero) or as a string holding one, as Hadoop does for
// ports and some counters. Values out of int64 range give ok=false.
func (a attrs) int(key string) (int64, bool) {
	s, ok := a.str(key)
	if !ok {
		return 0, false
	}
	return parseNumber(strings.TrimSpace(s))
}

func parseNumber(s string) (int64, bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f >= 1<<63 || f < -(1<<63) {
		return 0, false
	}
	return int64(f), true
}

// bool returns a boolean attribute (JSON true/false or the strings).
func (a attrs) bool(key string) (bool, bool) {
	s, ok := a.str(key)
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	return b, err == nil
}

// decode decodes an attribute that holds structured data into dst. Hadoop
// writes many such attributes (LiveNodes, VolumeInfo, NameDirStatuses, ...)
// as JSON encoded inside a string, others as plain JSON; both are accepted.
func (a attrs) decode(key string, dst any) bool {
	raw, ok := a[key]
	if !ok || isNull(raw) {
		return false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		raw = sanitizeJSON([]byte(s))
	}
	return json.Unmarshal(raw, dst) == nil
}

// versionOf returns the short version from SoftwareVersion ("3.3.0") or
// else from Version up to its first comma ("3.3.0, raa96f18..." → "3.3.0";
// 2.x writes "2.7.3.2.6.1.0-129" alone).
func versionOf(a attrs) string {
	if v, ok := a.str("SoftwareVersion"); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	v, _ := a.str("Version")
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// sanitizeJSON is jmxjson.Sanitize: Hadoop's bare NaN, Infinity and
// -Infinity tokens outside strings become null.
func sanitizeJSON(b []byte) []byte { return jmxjson.Sanitize(b) }
