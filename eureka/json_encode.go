package eureka

import (
	"unicode/utf8"

	"github.com/heureka-project/heureka"
)

// appendInstanceJSON writes the keys of eureka-spec §4.1 in the Java
// server's order.
func appendInstanceJSON(b []byte, in *heureka.Instance) []byte {
	b = append(b, `{"instanceId":`...)
	b = appendJSONString(b, in.ID)
	b = append(b, `,"hostName":`...)
	b = appendJSONString(b, in.HostName)
	b = append(b, `,"app":`...)
	b = appendJSONString(b, in.App)
	b = append(b, `,"ipAddr":`...)
	b = appendJSONString(b, in.IPAddr)
	if writeSID(in.SID) {
		b = append(b, `,"sid":`...)
		b = appendJSONString(b, in.SID)
	}
	b = append(b, `,"status":"`...)
	b = append(b, wireStatus(in.Status)...)
	b = append(b, `","overriddenStatus":"`...)
	b = append(b, wireStatus(in.OverriddenStatus)...)
	b = append(b, `","port":`...)
	b = appendPortJSON(b, in.Port)
	b = append(b, `,"securePort":`...)
	b = appendPortJSON(b, in.SecurePort)
	b = append(b, `,"countryId":`...)
	b = appendInt(b, int64(in.CountryID))

	name, class, amazon := wireDataCenter(&in.DataCenter)
	b = append(b, `,"dataCenterInfo":{"@class":"`...)
	b = append(b, class...)
	b = append(b, `","name":"`...)
	b = append(b, name...)
	b = append(b, '"')
	if amazon {
		b = append(b, `,"metadata":`...)
		b = appendMetadataJSON(b, in.DataCenter.Metadata, false)
	}
	b = append(b, '}')

	l := &in.Lease
	b = append(b, `,"leaseInfo":{"renewalIntervalInSecs":`...)
	b = appendInt(b, int64(l.RenewalIntervalSecs))
	b = append(b, `,"durationInSecs":`...)
	b = appendInt(b, int64(l.DurationSecs))
	b = append(b, `,"registrationTimestamp":`...)
	b = appendInt(b, l.RegistrationTimestamp)
	b = append(b, `,"lastRenewalTimestamp":`...)
	b = appendInt(b, l.LastRenewalTimestamp)
	b = append(b, `,"evictionTimestamp":`...)
	b = appendInt(b, l.EvictionTimestamp)
	b = append(b, `,"serviceUpTimestamp":`...)
	b = appendInt(b, l.ServiceUpTimestamp)
	b = append(b, `},"metadata":`...)
	b = appendMetadataJSON(b, in.Metadata, true)

	b = appendOptionalJSON(b, `,"appGroupName":`, in.AppGroupName)
	b = appendOptionalJSON(b, `,"homePageUrl":`, in.HomePageURL)
	b = appendOptionalJSON(b, `,"statusPageUrl":`, in.StatusPageURL)
	b = appendOptionalJSON(b, `,"healthCheckUrl":`, in.HealthCheckURL)
	b = appendOptionalJSON(b, `,"secureHealthCheckUrl":`, in.SecureHealthCheckURL)
	b = appendOptionalJSON(b, `,"vipAddress":`, in.VIPAddress)
	b = appendOptionalJSON(b, `,"secureVipAddress":`, in.SecureVIPAddress)
	b = append(b, `,"isCoordinatingDiscoveryServer":"`...)
	b = appendBool(b, in.IsCoordinatingDiscoveryServer)
	b = append(b, `","lastUpdatedTimestamp":"`...)
	b = appendInt(b, in.LastUpdatedTimestamp)
	b = append(b, `","lastDirtyTimestamp":"`...)
	b = appendInt(b, in.LastDirtyTimestamp)
	b = append(b, '"')
	if a := wireAction(in.ActionType); a != "" {
		b = append(b, `,"actionType":"`...)
		b = append(b, a...)
		b = append(b, '"')
	}
	b = appendOptionalJSON(b, `,"asgName":`, in.ASGName)
	return append(b, '}')
}

// appendPortJSON writes {"$":8080,"@enabled":"true"}: a number and a string,
// which is what fargo and the Java readers insist on.
func appendPortJSON(b []byte, p heureka.Port) []byte {
	b = append(b, `{"$":`...)
	b = appendInt(b, int64(p.Number))
	b = append(b, `,"@enabled":"`...)
	b = appendBool(b, p.Enabled)
	return append(b, `"}`...)
}

// appendMetadataJSON writes md with its keys sorted. An empty instance
// metadata map is Java's EmptyMap marker, never null or {}.
func appendMetadataJSON(b []byte, md heureka.Metadata, emptyMarker bool) []byte {
	n := 0
	for k, v := range md.All() {
		if !encodedKey(k, false) {
			continue
		}
		if n == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, v)
	}
	switch {
	case n > 0:
		return append(b, '}')
	case emptyMarker:
		return append(b, `{"@class":"`+classEmptyMap+`"}`...)
	default:
		return append(b, "{}"...)
	}
}

func appendOptionalJSON(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, key...)
	return appendJSONString(b, v)
}

// jsonPlain marks the ASCII bytes a JSON string may hold unescaped.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string (RFC 8259): quotes, backslashes
// and control characters escaped, U+2028 and U+2029 escaped for JavaScript
// readers, and each byte of invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
