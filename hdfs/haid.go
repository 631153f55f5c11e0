package hdfs

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
)

// maxHAIDLen bounds a nameservice or NameNode ID heureka reads or writes.
// Hadoop sets no limit; real IDs are short ("nn1", "namenode42").
const maxHAIDLen = 64

// ValidHAID reports whether id can be a nameservice or NameNode ID in a
// file heureka writes: 1 to 64 ASCII letters, digits, '-' or '_'. Hadoop
// itself only splits dfs.ha.namenodes.<ns> on commas and trims spaces, and
// builds per-ID keys as <key>.<ns>.<id>; keeping to these characters makes
// every such key unambiguous.
func ValidHAID(id string) bool {
	if id == "" || len(id) > maxHAIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// MaxConfBytes bounds how much of a /conf response ParseConfJSON reads. A
// daemon's whole configuration, defaults included, is a few hundred
// kilobytes.
const MaxConfBytes = 16 << 20

// ParseConfJSON reads the configuration a Hadoop daemon serves at
// /conf?format=json (ConfServlet, written by Configuration.dumpConfiguration):
// {"properties":[{"key":...,"value":...,"isFinal":...,"resource":...},...]}.
// It returns key → value. A body that is not that shape, or larger than
// MaxConfBytes, is EINVALID (ETOOLARGE).
func ParseConfJSON(r io.Reader) (map[string]string, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxConfBytes+1))
	if err != nil {
		return nil, heureka.Errorf(heureka.EUNAVAILABLE, "reading conf response: %v", err)
	}
	if len(body) > MaxConfBytes {
		return nil, heureka.Errorf(heureka.ETOOLARGE, "conf response is larger than %d bytes", MaxConfBytes)
	}
	var dump struct {
		Properties *[]struct {
			Key   *string `json:"key"`
			Value *string `json:"value"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), &dump); err != nil {
		return nil, heureka.Errorf(heureka.EINVALID, "conf response is not Hadoop's configuration JSON: %v", err)
	}
	if dump.Properties == nil {
		return nil, heureka.Errorf(heureka.EINVALID, "conf response has no \"properties\" array (ask for /conf?format=json)")
	}
	conf := make(map[string]string, len(*dump.Properties))
	for _, p := range *dump.Properties {
		if p.Key != nil && p.Value != nil {
			conf[*p.Key] = *p.Value
		}
	}
	return conf, nil
}

// NameNodeIdentity finds a NameNode's nameservice and NameNode ID in its
// own configuration, as Hadoop's NameNode does at start
// (DFSUtil.getNamenodeNameServiceId and HAUtil.getNameNodeId):
// dfs.nameservice.id and dfs.ha.namenode.id when set (the ID is taken as
// it is once the nameservice is known); otherwise the one
// dfs.namenode.rpc-address.<ns>.<nnId> (for each <ns> in dfs.nameservices
// and each <nnId> in dfs.ha.namenodes.<ns>) that is this NameNode's own
// address. Hadoop asks whether the address is on a local interface; here
// self is this NameNode's RPC address, "host:port" (NameNodeJMX.HostAndPort),
// compared host case-insensitively and port exactly.
//
// No match is ENOTFOUND (a NameNode outside HA has no ID); more than one is
// EINVALID, as Hadoop refuses to start with it. IDs that are not ValidHAID
// are EINVALID too.
func NameNodeIdentity(conf map[string]string, self string) (nameservice, id string, err error) {
	selfHost, selfPort, err := net.SplitHostPort(strings.TrimSpace(self))
	if err != nil {
		return "", "", heureka.Errorf(heureka.EINVALID, "NameNode address %q is not host:port", self)
	}
	split := func(v string) []string {
		var out []string
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	nss := split(conf["dfs.nameservices"])
	if ns := strings.TrimSpace(conf["dfs.nameservice.id"]); ns != "" {
		nss = []string{ns}
	}
	type match struct{ ns, id string }
	var found []match
	if own := strings.TrimSpace(conf["dfs.ha.namenode.id"]); own != "" && len(nss) == 1 {
		found = append(found, match{nss[0], own}) // Hadoop takes a set ID as it is
	} else {
		for _, ns := range nss {
			for _, nn := range split(conf["dfs.ha.namenodes."+ns]) {
				addr := strings.TrimSpace(conf["dfs.namenode.rpc-address."+ns+"."+nn])
				h, p, err := net.SplitHostPort(addr)
				if err != nil {
					h, p = addr, strconv.Itoa(DefaultNameNodeRPCPort)
				}
				if strings.EqualFold(h, selfHost) && p == selfPort {
					found = append(found, match{ns, nn})
				}
			}
		}
	}
	switch {
	case len(found) == 0:
		return "", "", heureka.Errorf(heureka.ENOTFOUND, "no dfs.namenode.rpc-address.<ns>.<id> in nameservices %q names %s", nss, self)
	case len(found) > 1:
		var names []string
		for _, m := range found {
			names = append(names, m.ns+"."+m.id)
		}
		sort.Strings(names)
		return "", "", heureka.Errorf(heureka.EINVALID, "several NameNode IDs have the address %s: %s", self, strings.Join(names, ", "))
	}
	if !ValidHAID(found[0].ns) || !ValidHAID(found[0].id) {
		return "", "", heureka.Errorf(heureka.EINVALID, "nameservice %q or NameNode ID %q is not 1-%d letters, digits, '-' or '_'", found[0].ns, found[0].id, maxHAIDLen)
	}
	return found[0].ns, found[0].id, nil
}
