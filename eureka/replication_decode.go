package eureka

import (
	"bytes"
	"encoding/json"
	"strings"
)

// scanReplicationList is the fast path of DecodeReplicationList: it reads
// a batch envelope with the JSON scanner instead of encoding/json's
// reflection, for the batches peers send ({"replicationList":[{...}]},
// member names as written, strings as strings, a number as
// lastDirtyTimestamp). It gives up (ok false) on anything where
// encoding/json's struct decoding has rules of its own: member names that
// match only ignoring case, repeated members, nulls, values of another
// type, malformed JSON. DecodeReplicationList then decodes the body with
// encoding/json, which also words the error. The items' instanceInfo
// values point into body.
func scanReplicationList(body []byte) (list []wireItem, ok bool) {
	if !scanJSON(body) {
		return nil, false
	}
	root := jsonNode(bytes.Trim(body, " \t\r\n"))
	if root.kind() != kObject {
		return nil, false
	}
	var items node
	ok = true
	root.each(func(k memberKey, v node) bool {
		switch {
		case k.is("replicationList") && !items.ok && v.kind() == kArray:
			items = v
		case strings.EqualFold(string(k.b), "replicationList"):
			ok = false
		}
		return ok
	})
	if !ok || !items.ok {
		return nil, false
	}
	items.elems(func(v node) bool {
		var w wireItem
		if w, ok = scanReplicationItem(v); ok {
			list = append(list, w)
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	return list, true
}

// replicationItemKeys are wireItem's JSON names.
var replicationItemKeys = []string{"appName", "id", "lastDirtyTimestamp", "status", "overriddenStatus", "instanceInfo", "action"}

func scanReplicationItem(v node) (w wireItem, ok bool) {
	if v.kind() != kObject {
		return w, false
	}
	ok = true
	var seen uint
	v.each(func(k memberKey, m node) bool {
		i := 0
		for i < len(replicationItemKeys) && !k.is(replicationItemKeys[i]) {
			i++
		}
		if i == len(replicationItemKeys) {
			for _, name := range replicationItemKeys {
				if strings.EqualFold(string(k.b), name) {
					ok = false // encoding/json would take it for name
				}
			}
			return ok
		}
		if seen&(1<<i) != 0 {
			ok = false
			return false
		}
		seen |= 1 << i
		switch kind := m.kind(); {
		case replicationItemKeys[i] == "instanceInfo":
			w.InstanceInfo = json.RawMessage(m.json)
		case replicationItemKeys[i] == "lastDirtyTimestamp":
			if ok = kind == kNumber; ok {
				w.LastDirtyTimestamp = json.Number(m.json)
			}
		case kind != kString:
			ok = false
		default:
			s := m.text()
			switch replicationItemKeys[i] {
			case "appName":
				w.AppName = s
			case "id":
				w.ID = s
			case "status":
				w.Status = s
			case "overriddenStatus":
				w.OverriddenStatus = s
			case "action":
				w.Action = s
			}
		}
		return ok
	})
	return w, ok
}
