package eureka

import (
	"strconv"

	"github.com/heureka-project/heureka"
)

// Class names written on the wire. Java readers need them to pick a type.
const (
	classAmazonInfo  = "com.netflix.appinfo.AmazonInfo"
	classDefaultInfo = "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"
	classEmptyMap    = "java.util.Collections$EmptyMap"
)

// EncodeInstance returns in as Eureka writes one instance:
// {"instance":{...}} in JSON, <instance>...</instance> in XML.
// Any format other than JSON is written as XML.
func EncodeInstance(f Format, in *heureka.Instance) []byte {
	if f == JSON {
		b := make([]byte, 0, 1024)
		b = append(b, `{"instance":`...)
		b = appendInstanceJSON(b, in)
		return append(b, '}')
	}
	return appendInstanceXML(make([]byte, 0, 1536), in)
}

// AppendInstance appends in to dst as a bare JSON object or <instance>
// element, without a root wrapper: the form replication batches and
// pre-encoded snapshots embed.
func AppendInstance(dst []byte, f Format, in *heureka.Instance) []byte {
	if f == JSON {
		return appendInstanceJSON(dst, in)
	}
	return appendInstanceXML(dst, in)
}

// AppendError appends heureka's error body for msg: {"error":"msg"} in
// JSON, <error><message>msg</message></error> in XML. It is not Eureka's
// (Eureka answers most errors with no body) but rides on the same formats.
func AppendError(dst []byte, f Format, msg string) []byte {
	if f == JSON {
		dst = append(dst, `{"error":`...)
		dst = appendJSONString(dst, msg)
		return append(dst, '}')
	}
	dst = append(dst, "<error><message>"...)
	dst = appendXMLText(dst, msg)
	return append(dst, "</message></error>"...)
}

// EncodeApplication returns app as Eureka writes one application:
// {"application":{"name":..,"instance":[...]}} or <application>...</application>.
// The name is written as given (the registry keeps it upper-case); the
// instance list is always an array, [] when empty.
func EncodeApplication(f Format, app *heureka.Application) []byte {
	if app == nil {
		app = &heureka.Application{}
	}
	b := make([]byte, 0, 256+sizeHint(f)*instanceCount(app))
	b = AppendAppOpen(b, f, app.Name, true)
	b = AppendInstances(b, f, app.Instances)
	return AppendAppClose(b, f, true)
}

// EncodeApplications returns a registry listing (full, delta or VIP query)
// as Eureka writes it: {"applications":{"versions__delta":"1",
// "apps__hashcode":"UP_1_","application":[...]}} or <applications>...
// VersionDelta and HashCode are written as given, both as strings; compute
// the hash code with heureka.ReconcileHashCode. A nil apps is an empty
// listing.
func EncodeApplications(f Format, apps *heureka.Applications) []byte {
	if apps == nil {
		apps = &heureka.Applications{}
	}
	n := 0
	for _, a := range apps.Apps {
		n += instanceCount(a)
	}
	b := make([]byte, 0, 256+64*len(apps.Apps)+sizeHint(f)*n)
	b = AppendListingOpen(b, f, apps.VersionDelta, apps.HashCode)
	first := true
	for _, a := range apps.Apps {
		if a == nil {
			continue
		}
		if !first {
			b = append(b, Separator(f)...)
		}
		first = false
		b = AppendAppOpen(b, f, a.Name, false)
		b = AppendInstances(b, f, a.Instances)
		b = AppendAppClose(b, f, false)
	}
	return AppendListingClose(b, f)
}

// sizeHint is a typical encoded instance's size, used to size buffers so a
// listing is written without regrowing more than once or twice.
func sizeHint(f Format) int {
	if f == JSON {
		return 900
	}
	return 1200
}

func instanceCount(app *heureka.Application) int {
	if app == nil {
		return 0
	}
	return len(app.Instances)
}

// Canonicalisation. Whatever an Instance holds, the output carries only the
// closed sets of values Java readers accept.

// wireStatus returns s if it is one of the five statuses, and UNKNOWN
// otherwise (empty included).
func wireStatus(s heureka.Status) string {
	switch s {
	case heureka.StatusUp, heureka.StatusDown, heureka.StatusStarting, heureka.StatusOutOfService, heureka.StatusUnknown:
		return string(s)
	}
	return string(heureka.LenientStatus(string(s), heureka.StatusUnknown))
}

// wireAction returns a as written, or "" (not written) when it is not one of
// ADDED, MODIFIED, DELETED.
func wireAction(a heureka.ActionType) string {
	switch a {
	case heureka.ActionAdded, heureka.ActionModified, heureka.ActionDeleted:
		return string(a)
	}
	return ""
}

// wireDataCenter returns the name and class to write for dc; metadata is
// written only when amazon is true.
func wireDataCenter(dc *heureka.DataCenterInfo) (name, class string, amazon bool) {
	switch dc.Name {
	case heureka.DataCenterAmazon:
		return dc.Name, classAmazonInfo, true
	case heureka.DataCenterNetflix:
		return dc.Name, classDefaultInfo, false
	}
	return heureka.DataCenterMyOwn, classDefaultInfo, false
}

// writeSID reports whether sid is written: Eureka leaves out its defaults.
func writeSID(sid string) bool { return sid != "" && sid != "na" && sid != "unknown" }

// encodedKey reports whether a metadata key is written: never "@class" (a
// Java type hint, not metadata), and in XML only a key that can be an
// element name (see ValidXMLMetadataKey). Metadata keeps its keys in order,
// so what is written is sorted.
func encodedKey(k string, xml bool) bool {
	return k != "@class" && (!xml || ValidXMLMetadataKey(k))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
