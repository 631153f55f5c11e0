package dnsapi

import (
	"net/netip"
	"strconv"
	"strings"
)

// The names of the zone, below its domain D (see doc.go and
// docs/design.md):
//
//	<app>.service.D                 the application's UP instances
//	<state>.<app>.service.D         those in one role state (active, standby, ...)
//	<rack labels>.rack.<app>.service.D   those on one rack
//	<id labels>.id.<app>.service.D  one instance, whatever its status
//
// An application's name is its labels, lower case. What stands in front of
// the application is its qualifier; which labels are the application is
// decided by the registry: the longest run of trailing labels that names a
// registered application. So an application literally named
// "active.hdfs-namenode.x" is found as itself, before the active NameNodes
// of "hdfs-namenode.x".

// Marker labels that end a qualifier.
const (
	rackMarker = "rack"
	idMarker   = "id"
	serviceTag = "service"
)

// EncodeLabel returns the DNS label for one component of a rack path or of
// an instance ID: lower-case letters, digits and '-' stand for themselves,
// and every other byte (upper-case letters, '.', '_', anything else) is '_'
// and its two lower-case hex digits. The mapping is one to one, so a label
// names exactly one component and back; ok is false when the component is
// empty or its label would pass DNS's 63 bytes.
func EncodeLabel(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if literal(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	if b.Len() > 63 {
		return "", false
	}
	return b.String(), true
}

// DecodeLabel is EncodeLabel's inverse. It takes a label as read from a
// query (lower case) and refuses any label EncodeLabel would not write: a
// bad escape, or an escape of a byte that stands for itself.
func DecodeLabel(l string) (string, bool) {
	if l == "" || len(l) > 63 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c != '_' {
			if !literal(c) {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(l) {
			return "", false
		}
		hi, ok1 := unhex(l[i+1])
		lo, ok2 := unhex(l[i+2])
		v := hi<<4 | lo
		if !ok1 || !ok2 || literal(v) {
			return "", false
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), true
}

const hexDigits = "0123456789abcdef"

func literal(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' }

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// RackName returns the name of a rack's instances of app in zone, e.g.
// "/dc1/rack-a" of "hdfs-datanode.prod" in "heureka." is
// "dc1.rack-a.rack.hdfs-datanode.prod.service.heureka.": the path's
// components in order, one label each (EncodeLabel), then "rack". ok is
// false when a component cannot be a label or the name passes 255 bytes.
func RackName(rack, app, zone string) (string, bool) {
	return qualified(strings.Split(strings.Trim(rack, "/"), "/"), rackMarker, app, zone)
}

// InstanceName returns the name of one instance of app in zone: its ID's
// dot-separated parts, one label each (EncodeLabel), then "id", e.g.
// "dn1.example.com:9866" is "dn1.example.com_3a9866.id.<app>.service.<zone>".
func InstanceName(id, app, zone string) (string, bool) {
	return qualified(strings.Split(id, "."), idMarker, app, zone)
}

// ServiceName returns the name of app's UP instances in zone.
func ServiceName(app, zone string) string {
	return strings.ToLower(app) + "." + serviceTag + "." + zone
}

func qualified(parts []string, marker, app, zone string) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		l, ok := EncodeLabel(p)
		if !ok {
			return "", false
		}
		b.WriteString(l)
		b.WriteByte('.')
	}
	b.WriteString(marker + ".")
	b.WriteString(ServiceName(app, zone))
	if b.Len() > 254 {
		return "", false
	}
	return b.String(), true
}

// decodeParts reads qualifier labels back into the string they encode,
// joined by sep.
func decodeParts(labels []string, sep string) (string, bool) {
	parts := make([]string, len(labels))
	for i, l := range labels {
		p, ok := DecodeLabel(l)
		if !ok {
			return "", false
		}
		parts[i] = p
	}
	return strings.Join(parts, sep), true
}

// reverseAddr reads a reverse-lookup name (lower case, fully qualified):
// d.c.b.a.in-addr.arpa. or 32 nibbles of ip6.arpa. ok is false for any
// other name, including a partial one.
func reverseAddr(name string) (netip.Addr, bool) {
	if rest, ok := strings.CutSuffix(name, ".in-addr.arpa."); ok {
		labels := strings.Split(rest, ".")
		if len(labels) != 4 {
			return netip.Addr{}, false
		}
		var a [4]byte
		for i, l := range labels {
			if len(l) > 1 && l[0] == '0' {
				return netip.Addr{}, false
			}
			v, err := strconv.ParseUint(l, 10, 8)
			if err != nil {
				return netip.Addr{}, false
			}
			a[3-i] = byte(v)
		}
		return netip.AddrFrom4(a), true
	}
	if rest, ok := strings.CutSuffix(name, ".ip6.arpa."); ok {
		labels := strings.Split(rest, ".")
		if len(labels) != 32 {
			return netip.Addr{}, false
		}
		var a [16]byte
		for i, l := range labels {
			if len(l) != 1 {
				return netip.Addr{}, false
			}
			v, ok := unhex(l[0])
			if !ok {
				return netip.Addr{}, false
			}
			n := 31 - i // nibble index from the most significant
			a[n/2] |= v << (4 * (1 - n%2))
		}
		return netip.AddrFrom16(a), true
	}
	return netip.Addr{}, false
}

// isReverse reports whether name is under a reverse-lookup tree.
func isReverse(name string) bool {
	return strings.HasSuffix(name, ".in-addr.arpa.") || strings.HasSuffix(name, ".ip6.arpa.") ||
		name == "in-addr.arpa." || name == "ip6.arpa."
}
