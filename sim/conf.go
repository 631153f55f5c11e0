package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/heureka-project/heureka/hdfs"
)

// HA is a simulated NameNode's place in an HA nameservice, which its /conf
// shows as Hadoop's hdfs-site keys: dfs.nameservices, dfs.ha.namenodes.<ns>
// and dfs.namenode.rpc-address.<ns>.<id> for every NameNode, as every
// NameNode of a real HA pair is configured.
type HA struct {
	Nameservice string
	// NameNodes are all the nameservice's NameNodes, this one included.
	NameNodes []HANameNode
}

// HANameNode is one NameNode of an HA nameservice: its NameNode ID and its
// client RPC address, "host:port".
type HANameNode struct{ ID, RPCAddr string }

// SetHA makes a NameNode's /conf show ha, as when its hdfs-site.xml names
// its nameservice; the zero HA shows none. The NameNodes' RPC addresses
// are known once they are open, so a demo opens them all, then calls
// this. It is an error for a DataNode, or for an HA Hadoop would refuse.
func (s *Sim) SetHA(ha HA) error {
	if s.cfg.Role != hdfs.RoleNameNode {
		return errors.New("sim: a DataNode has no HA nameservice")
	}
	if ha.Nameservice != "" || len(ha.NameNodes) > 0 {
		if !hdfs.ValidHAID(ha.Nameservice) {
			return fmt.Errorf("sim: nameservice %q is not a valid HA ID", ha.Nameservice)
		}
		seen := map[string]bool{}
		for _, nn := range ha.NameNodes {
			if _, _, err := net.SplitHostPort(nn.RPCAddr); err != nil || !hdfs.ValidHAID(nn.ID) || seen[nn.ID] {
				return fmt.Errorf("sim: NameNode %q at %q: want a unique valid ID and host:port", nn.ID, nn.RPCAddr)
			}
			seen[nn.ID] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ha = ha
	return nil
}

// confProperty is one entry of Hadoop's /conf?format=json
// (Configuration.dumpConfiguration).
type confProperty struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	IsFinal  bool   `json:"isFinal"`
	Resource string `json:"resource"`
}

// serveConf answers /conf as Hadoop's ConfServlet does with format=json:
// the daemon's configuration as {"properties": [...]}. The simulator's is
// small: where its RPC server listens and, for a NameNode in an HA
// nameservice, the nameservice's keys. Other formats are 400, as
// ConfServlet answers an unknown one.
func (s *Sim) serveConf(w http.ResponseWriter, r *http.Request) {
	if f := r.URL.Query().Get("format"); f != "json" {
		http.Error(w, fmt.Sprintf("heureka sim serves /conf as format=json only, not %q", f), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	props := s.confLocked()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string][]confProperty{"properties": props})
}

func (s *Sim) confLocked() []confProperty {
	site := func(k, v string) confProperty { return confProperty{Key: k, Value: v, Resource: "hdfs-site.xml"} }
	_, port, _ := net.SplitHostPort(s.portAddr)
	self := net.JoinHostPort(s.cfg.Hostname, port)
	if s.cfg.Role == hdfs.RoleDataNode {
		return []confProperty{site("dfs.datanode.address", self)}
	}
	if s.ha.Nameservice == "" {
		return []confProperty{
			{Key: "fs.defaultFS", Value: "hdfs://" + self, Resource: "core-site.xml"},
			site("dfs.namenode.rpc-address", self),
		}
	}
	ns := s.ha.Nameservice
	props := []confProperty{
		{Key: "fs.defaultFS", Value: "hdfs://" + ns, Resource: "core-site.xml"},
		site("dfs.nameservices", ns),
	}
	var ids []string
	for _, nn := range s.ha.NameNodes {
		ids = append(ids, nn.ID)
		props = append(props, site("dfs.namenode.rpc-address."+ns+"."+nn.ID, nn.RPCAddr))
	}
	return append(props, site("dfs.ha.namenodes."+ns, strings.Join(ids, ",")))
}
