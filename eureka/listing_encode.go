package eureka

import (
	"iter"
	"slices"

	"github.com/heureka-project/heureka"
)

// The pieces of a listing, for callers that assemble one from runs of
// instances encoded separately (the server keeps each run's encoding and
// re-encodes only the runs that changed). Writing
//
//	ListingOpen, then per application (Separator between two of them)
//	AppOpen, the instances' runs (Separator between two runs), AppClose,
//	then ListingClose
//
// gives exactly the bytes of EncodeApplications; AppOpen and AppClose with
// single set, around the runs, give those of EncodeApplication. A run is
// AppendInstances of consecutive instances. EncodeApplications and
// EncodeApplication are written with these same functions.

// AppendListingOpen appends the start of a registry listing: the root
// element, versions__delta, apps__hashcode and the opening of the list of
// applications.
func AppendListingOpen(b []byte, f Format, versionDelta int64, hashCode string) []byte {
	if f == JSON {
		b = append(b, `{"applications":{"versions__delta":"`...)
		b = appendInt(b, versionDelta)
		b = append(b, `","apps__hashcode":`...)
		b = appendJSONString(b, hashCode)
		return append(b, `,"application":[`...)
	}
	b = append(b, "<applications><versions__delta>"...)
	b = appendInt(b, versionDelta)
	b = append(b, "</versions__delta><apps__hashcode>"...)
	b = appendXMLText(b, hashCode)
	return append(b, "</apps__hashcode>"...)
}

// AppendListingClose appends the end of a registry listing.
func AppendListingClose(b []byte, f Format) []byte {
	if f == JSON {
		return append(b, "]}}"...)
	}
	return append(b, "</applications>"...)
}

// AppendAppOpen appends the start of application name, up to its first
// instance; single wraps it as the whole body of a one-application read.
func AppendAppOpen(b []byte, f Format, name string, single bool) []byte {
	if f == JSON {
		if single {
			b = append(b, `{"application":`...)
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, name)
		return append(b, `,"instance":[`...)
	}
	b = append(b, "<application>"...)
	return appendXMLElem(b, "name", name)
}

// AppendAppClose appends the end of an application.
func AppendAppClose(b []byte, f Format, single bool) []byte {
	if f == JSON {
		if single {
			return append(b, "]}}"...)
		}
		return append(b, "]}"...)
	}
	return append(b, "</application>"...)
}

// Separator is what f writes between two applications of a listing and
// between two instances of an application: a comma in JSON, nothing in XML.
func Separator(f Format) string {
	if f == JSON {
		return ","
	}
	return ""
}

// AppendInstances appends instances as they appear inside an application,
// separated by Separator; nil entries are skipped.
func AppendInstances(b []byte, f Format, instances []*heureka.Instance) []byte {
	return AppendInstanceSeq(b, f, slices.Values(instances))
}

// AppendInstanceSeq is AppendInstances of the instances seq yields.
func AppendInstanceSeq(b []byte, f Format, instances iter.Seq[*heureka.Instance]) []byte {
	first := true
	for in := range instances {
		if in == nil {
			continue
		}
		if !first {
			b = append(b, Separator(f)...)
		}
		first = false
		b = AppendInstance(b, f, in)
	}
	return b
}
