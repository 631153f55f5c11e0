package eureka

import (
	"unicode/utf8"

	"github.com/heureka-project/heureka"
)

// The XML is written compactly, without an <?xml?> declaration (XStream
// writes none), one element per field, in the JSON order.

func appendInstanceXML(b []byte, in *heureka.Instance) []byte {
	b = append(b, "<instance>"...)
	b = appendXMLElem(b, "instanceId", in.ID)
	b = appendXMLElem(b, "hostName", in.HostName)
	b = appendXMLElem(b, "app", in.App)
	b = appendXMLElem(b, "ipAddr", in.IPAddr)
	if writeSID(in.SID) {
		b = appendXMLElem(b, "sid", in.SID)
	}
	b = append(b, "<status>"...)
	b = append(b, wireStatus(in.Status)...)
	b = append(b, "</status><overriddenstatus>"...)
	b = append(b, wireStatus(in.OverriddenStatus)...)
	b = append(b, "</overriddenstatus>"...)
	b = appendPortXML(b, "port", in.Port)
	b = appendPortXML(b, "securePort", in.SecurePort)
	b = append(b, "<countryId>"...)
	b = appendInt(b, int64(in.CountryID))
	b = append(b, "</countryId>"...)

	name, class, amazon := wireDataCenter(&in.DataCenter)
	b = append(b, `<dataCenterInfo class="`...)
	b = append(b, class...)
	b = append(b, `"><name>`...)
	b = append(b, name...)
	b = append(b, "</name>"...)
	if amazon {
		b = appendMetadataXML(b, in.DataCenter.Metadata, false)
	}
	b = append(b, "</dataCenterInfo>"...)

	l := &in.Lease
	b = append(b, "<leaseInfo><renewalIntervalInSecs>"...)
	b = appendInt(b, int64(l.RenewalIntervalSecs))
	b = append(b, "</renewalIntervalInSecs><durationInSecs>"...)
	b = appendInt(b, int64(l.DurationSecs))
	b = append(b, "</durationInSecs><registrationTimestamp>"...)
	b = appendInt(b, l.RegistrationTimestamp)
	b = append(b, "</registrationTimestamp><lastRenewalTimestamp>"...)
	b = appendInt(b, l.LastRenewalTimestamp)
	b = append(b, "</lastRenewalTimestamp><evictionTimestamp>"...)
	b = appendInt(b, l.EvictionTimestamp)
	b = append(b, "</evictionTimestamp><serviceUpTimestamp>"...)
	b = appendInt(b, l.ServiceUpTimestamp)
	b = append(b, "</serviceUpTimestamp></leaseInfo>"...)
	b = appendMetadataXML(b, in.Metadata, true)

	b = appendOptionalXML(b, "appGroupName", in.AppGroupName)
	b = appendOptionalXML(b, "homePageUrl", in.HomePageURL)
	b = appendOptionalXML(b, "statusPageUrl", in.StatusPageURL)
	b = appendOptionalXML(b, "healthCheckUrl", in.HealthCheckURL)
	b = appendOptionalXML(b, "secureHealthCheckUrl", in.SecureHealthCheckURL)
	b = appendOptionalXML(b, "vipAddress", in.VIPAddress)
	b = appendOptionalXML(b, "secureVipAddress", in.SecureVIPAddress)
	b = append(b, "<isCoordinatingDiscoveryServer>"...)
	b = appendBool(b, in.IsCoordinatingDiscoveryServer)
	b = append(b, "</isCoordinatingDiscoveryServer><lastUpdatedTimestamp>"...)
	b = appendInt(b, in.LastUpdatedTimestamp)
	b = append(b, "</lastUpdatedTimestamp><lastDirtyTimestamp>"...)
	b = appendInt(b, in.LastDirtyTimestamp)
	b = append(b, "</lastDirtyTimestamp>"...)
	if a := wireAction(in.ActionType); a != "" {
		b = appendXMLElem(b, "actionType", a)
	}
	b = appendOptionalXML(b, "asgName", in.ASGName)
	return append(b, "</instance>"...)
}

// appendPortXML writes <port enabled="true">8080</port>; py_eureka_client
// requires the attribute.
func appendPortXML(b []byte, name string, p heureka.Port) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, ` enabled="`...)
	b = appendBool(b, p.Enabled)
	b = append(b, `">`...)
	b = appendInt(b, int64(p.Number))
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendMetadataXML writes md as one element per key, keys sorted and
// escaped (see ValidXMLMetadataKey). Keys that cannot be element names are
// left out. An empty instance metadata map is the self-closing EmptyMap
// marker: fargo panics on an element holding only white space.
func appendMetadataXML(b []byte, md heureka.Metadata, emptyMarker bool) []byte {
	n := 0
	for k, v := range md.All() {
		if !encodedKey(k, true) {
			continue
		}
		if n == 0 {
			b = append(b, "<metadata>"...)
		}
		n++
		b = append(b, '<')
		b = appendEscapedName(b, k)
		b = append(b, '>')
		b = appendXMLText(b, v)
		b = append(b, "</"...)
		b = appendEscapedName(b, k)
		b = append(b, '>')
	}
	switch {
	case n > 0:
		return append(b, "</metadata>"...)
	case emptyMarker:
		return append(b, `<metadata class="`+classEmptyMap+`"/>`...)
	default:
		return append(b, "<metadata/>"...)
	}
}

func appendXMLElem(b []byte, name, v string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendXMLText(b, v)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

func appendOptionalXML(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendXMLElem(b, name, v)
}

// ValidXMLMetadataKey reports whether metadata key k can be written as an XML
// element name. Keys are escaped as XStream does ('_' as "__", '$' as "_-");
// after that the name must be an XML name made of ASCII letters, digits,
// '.', '-' and '_' that does not start with a digit, '.' or '-'. Other keys
// (empty, with spaces, ':', or non-ASCII characters) are left out of XML
// output and rejected in XML input; JSON carries them unchanged. ASCII is
// stricter than XML allows, but every XML parser agrees on it.
func ValidXMLMetadataKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_', c == '$':
		case '0' <= c && c <= '9', c == '-', c == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// appendEscapedName writes metadata key k as an element name: '_' as "__"
// and '$' as "_-". k must satisfy ValidXMLMetadataKey.
func appendEscapedName(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		switch c := k[i]; c {
		case '_':
			b = append(b, '_', '_')
		case '$':
			b = append(b, '_', '-')
		default:
			b = append(b, c)
		}
	}
	return b
}

// unescapeName undoes appendEscapedName: "__" is '_' and "_-" is '$'; any
// other '_' stands for itself.
func unescapeName(s string) string {
	i := 0
	for i < len(s)-1 && (s[i] != '_' || (s[i+1] != '_' && s[i+1] != '-')) {
		i++
	}
	if i >= len(s)-1 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '_' && i+1 < len(s) {
			switch s[i+1] {
			case '_':
				b = append(b, '_')
				i++
				continue
			case '-':
				b = append(b, '$')
				i++
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// xmlPlain marks the ASCII bytes XML text may hold unescaped.
var xmlPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '&' && c != '<' && c != '>' && c != '"' && c != '\''
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// appendXMLText writes s as XML character data, fit for element content and
// attribute values: the five markup characters escaped, '\r' as a character
// reference (parsers would fold a raw one into '\n'), and every character XML
// 1.0 does not allow (control characters, U+FFFE, U+FFFF, invalid UTF-8)
// replaced by U+FFFD.
func appendXMLText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if xmlPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '&':
				b = append(b, "&amp;"...)
			case '<':
				b = append(b, "&lt;"...)
			case '>':
				b = append(b, "&gt;"...)
			case '"':
				b = append(b, "&quot;"...)
			case '\'':
				b = append(b, "&apos;"...)
			case '\r':
				b = append(b, "&#xD;"...)
			default:
				b = append(b, "\ufffd"...)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == 0xFFFE || r == 0xFFFF {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
