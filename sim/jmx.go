package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka/hdfs"
)

// attr is one bean attribute; a bean is its attributes in order, "name"
// and "modelerType" first, as Hadoop writes them.
type attr struct {
	k string
	v any // string, int64, int, float64, bool, nil or []string
}

type bean []attr

func (b bean) name() string { return b[0].v.(string) }

// simTag marks every metrics bean as simulated.
var simTag = attr{"tag.Simulator", "heureka sim (not Hadoop)"}

// beans returns the daemon's beans as of now.
func (s *Sim) beans() []bean {
	s.mu.Lock()
	st := s.st
	portAddr := s.portAddr
	s.mu.Unlock()
	port := 0
	if _, p, err := net.SplitHostPort(portAddr); err == nil {
		port, _ = strconv.Atoi(p)
	}
	if s.cfg.Role == hdfs.RoleNameNode {
		return s.nameNodeBeans(st, port)
	}
	return s.dataNodeBeans(st, port)
}

func (s *Sim) simulatorBean() bean {
	return bean{
		{"name", "Heureka:service=Simulator,name=SimulatorInfo"},
		{"modelerType", "heureka.sim.Sim"},
		{"Simulated", true},
		{"Role", string(s.cfg.Role)},
		{"Description", "heureka sim: a simulated HDFS " + string(s.cfg.Role) + " for tests and demos; not Hadoop"},
		{"StartTime", s.started.UnixMilli()},
	}
}

func (s *Sim) jvmBean(service string) bean {
	return bean{
		{"name", "Hadoop:service=" + service + ",name=JvmMetrics"},
		{"modelerType", "JvmMetrics"},
		{"tag.Context", "jvm"},
		{"tag.ProcessName", service},
		{"tag.SessionId", nil},
		{"tag.Hostname", s.cfg.Hostname},
		simTag,
		{"MemNonHeapUsedM", 78.60549},
		{"MemHeapUsedM", 86.6555},
		{"MemHeapCommittedM", 270.5},
		{"MemHeapMaxM", 7115.0},
		{"GcCount", int64(1024)},
		{"GcTimeMillis", int64(5120)},
		{"ThreadsRunnable", 36},
		{"ThreadsWaiting", 11},
		{"LogFatal", 0},
		{"LogError", 0},
	}
}

const dataNodeUUID = "5a1b6c2d-0000-4e5f-9a8b-heureka-sim"

func (s *Sim) dataNodeBeans(st figures, dataPort int) []bean {
	const ipcPort = 9867 // not listened on: the agent does not use it
	remaining := st.capacity - st.used
	n := int64(len(s.cfg.Volumes))
	volInfo := map[string]map[string]any{}
	for i, v := range s.cfg.Volumes {
		share := func(x int64) int64 {
			q := x / n
			if int64(i) == 0 {
				q += x % n
			}
			return q
		}
		volInfo[v] = map[string]any{
			"numBlocks": share(st.blocks), "usedSpace": share(st.used), "freeSpace": share(remaining),
			"reservedSpace": 0, "storageType": "DISK", "reservedSpaceForReplicas": 0,
		}
	}
	volJSON, _ := json.Marshal(volInfo)
	actors, _ := json.Marshal([]map[string]string{{
		"maxDataLength": "134217728", "LastHeartbeat": "1", "ActorState": "RUNNING",
		"NamenodeAddress": "nn.heureka-sim:8020", "BlockPoolID": "BP-1-127.0.0.1-1700000000000",
		"maxBlockReportSize": "0", "LastBlockReport": "60",
	}})
	dirs := "[" + strings.Join(s.cfg.Volumes, ", ") + "]"
	dataset := func(name, modeler string, mbean bool) bean {
		b := bean{{"name", name}, {"modelerType", modeler}}
		if !mbean {
			b = append(b, attr{"tag.Context", "FSDatasetState"},
				attr{"tag.StorageInfo", "FSDataset{dirpath='" + dirs + "'}"},
				attr{"tag.Hostname", s.cfg.Hostname}, simTag)
		}
		b = append(b,
			attr{"Capacity", st.capacity}, attr{"DfsUsed", st.used}, attr{"Remaining", remaining},
			attr{"NumFailedVolumes", 0}, attr{"LastVolumeFailureDate", 0}, attr{"EstimatedCapacityLostTotal", 0},
			attr{"CacheUsed", 0}, attr{"CacheCapacity", 0}, attr{"NumBlocksCached", 0},
			attr{"NumBlocksFailedToCache", 0})
		if mbean {
			b = append(b, attr{"StorageInfo", "FSDataset{dirpath='" + dirs + "'}"},
				attr{"FailedStorageLocations", []string{}}, attr{"NumBlocksFailedToUncache", 0})
		} else {
			b = append(b, attr{"NumBlocksFailedToUnCache", 0})
		}
		return b
	}
	return []bean{
		s.simulatorBean(),
		s.jvmBean("DataNode"),
		{
			{"name", "Hadoop:service=DataNode,name=DataNodeInfo"},
			{"modelerType", "org.apache.hadoop.hdfs.server.datanode.DataNode"},
			{"XceiverCount", 1},
			{"XmitsInProgress", 0},
			{"SoftwareVersion", st.version},
			{"Version", st.version + ", rheureka-sim"},
			{"RpcPort", strconv.Itoa(ipcPort)},
			{"DataPort", strconv.Itoa(dataPort)},
			{"HttpPort", nil},
			{"NamenodeAddresses", `{"nn.heureka-sim":"BP-1-127.0.0.1-1700000000000"}`},
			{"DatanodeHostname", s.cfg.Hostname},
			{"BPServiceActorInfo", string(actors)},
			{"VolumeInfo", string(volJSON)},
			{"ClusterId", s.cfg.ClusterID},
			{"DiskBalancerStatus", `{"currentState":[],"result":"NO_PLAN","planID":"","planFile":""}`},
			{"SecurityEnabled", false},
			{"SendPacketDownstreamAvgInfo", nil},
			{"SlowDisks", nil},
		},
		dataset("Hadoop:service=DataNode,name=FSDatasetState", "FSDatasetState", false),
		dataset("Hadoop:service=DataNode,name=FSDatasetState-"+dataNodeUUID,
			"org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl", true),
		{
			{"name", fmt.Sprintf("Hadoop:service=DataNode,name=DataNodeActivity-%s-%d", s.cfg.Hostname, dataPort)},
			{"modelerType", fmt.Sprintf("DataNodeActivity-%s-%d", s.cfg.Hostname, dataPort)},
			{"tag.SessionId", nil},
			{"tag.Context", "dfs"},
			{"tag.Hostname", s.cfg.Hostname},
			simTag,
			{"BytesWritten", int64(0)},
			{"BytesRead", int64(0)},
			{"BlocksWritten", int64(0)},
			{"BlocksRead", int64(0)},
			{"HeartbeatsNumOps", int64(time.Since(s.started) / (3 * time.Second))},
			{"HeartbeatsAvgTime", 2.0},
			{"VolumeFailures", 0},
		},
	}
}

func (s *Sim) nameNodeBeans(st figures, rpcPort int) []bean {
	remaining := st.capacity - st.used
	percent := func(part int64) any {
		if st.capacity == 0 {
			return math.NaN() // Hadoop divides by zero too, and prints NaN
		}
		return math.Round(float64(part)*100/float64(st.capacity)*1e5) / 1e5
	}
	fsState, safemode := "Operational", ""
	if st.safemode {
		fsState = "safeMode"
		safemode = "Safe mode is ON. It was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."
	}
	version := st.version + ", rheureka-sim"
	return []bean{
		s.simulatorBean(),
		s.jvmBean("NameNode"),
		{
			{"name", "Hadoop:service=NameNode,name=NameNodeStatus"},
			{"modelerType", "org.apache.hadoop.hdfs.server.namenode.NameNode"},
			{"NNRole", "NameNode"},
			{"HostAndPort", net.JoinHostPort(s.cfg.Hostname, strconv.Itoa(rpcPort))},
			{"SecurityEnabled", false},
			{"LastHATransitionTime", st.haTransition},
			{"BytesWithFutureGenerationStamps", 0},
			{"SlowPeersReport", nil},
			{"SlowDisksReport", nil},
			{"State", string(st.ha)},
		},
		{
			{"name", "Hadoop:service=NameNode,name=FSNamesystem"},
			{"modelerType", "FSNamesystem"},
			{"tag.Context", "dfs"},
			{"tag.HAState", string(st.ha)},
			{"tag.TotalSyncTimes", "0 "},
			{"tag.Hostname", s.cfg.Hostname},
			simTag,
			{"MissingBlocks", 0},
			{"CapacityTotal", st.capacity},
			{"CapacityUsed", st.used},
			{"CapacityRemaining", remaining},
			{"CapacityUsedNonDFS", 0},
			{"TotalLoad", 0},
			{"BlocksTotal", st.blocks},
			{"FilesTotal", st.blocks},
			{"UnderReplicatedBlocks", 0},
			{"CorruptBlocks", 0},
			{"NumLiveDataNodes", 0},
			{"NumDeadDataNodes", 0},
			{"NumDecommissioningDataNodes", 0},
			{"StaleDataNodes", 0},
		},
		{
			{"name", "Hadoop:service=NameNode,name=FSNamesystemState"},
			{"modelerType", "org.apache.hadoop.hdfs.server.namenode.FSNamesystem"},
			{"CapacityTotal", st.capacity},
			{"CapacityUsed", st.used},
			{"CapacityRemaining", remaining},
			{"TotalLoad", 0},
			{"BlocksTotal", st.blocks},
			{"FilesTotal", st.blocks},
			{"FSState", fsState},
			{"NumLiveDataNodes", 0},
			{"NumDeadDataNodes", 0},
			{"NumDecomLiveDataNodes", 0},
			{"NumDecomDeadDataNodes", 0},
			{"NumDecommissioningDataNodes", 0},
			{"NumStaleDataNodes", 0},
		},
		{
			{"name", "Hadoop:service=NameNode,name=NameNodeInfo"},
			{"modelerType", "org.apache.hadoop.hdfs.server.namenode.FSNamesystem"},
			{"Total", st.capacity},
			{"UpgradeFinalized", true},
			{"BlockPoolId", "BP-1-127.0.0.1-1700000000000"},
			{"ClusterId", s.cfg.ClusterID},
			{"Version", version},
			{"SoftwareVersion", st.version},
			{"Used", st.used},
			{"Free", remaining},
			{"Safemode", safemode},
			{"NonDfsUsedSpace", 0},
			{"PercentUsed", percent(st.used)},
			{"PercentRemaining", percent(remaining)},
			{"TotalBlocks", st.blocks},
			{"NumberOfMissingBlocks", 0},
			{"LiveNodes", "{}"},
			{"DeadNodes", "{}"},
			{"DecomNodes", "{}"},
			{"EnteringMaintenanceNodes", "{}"},
			{"NameDirStatuses", `{"active":{"/data/hdfs/name":"IMAGE_AND_EDITS"},"failed":{}}`},
			{"NNStartedTimeInMillis", s.started.UnixMilli()},
		},
	}
}

// serveDaemon is the daemon's HTTP surface: /jmx, as Hadoop's
// JMXJsonServlet answers it, and /conf (conf.go).
func (s *Sim) serveDaemon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Heureka-Simulator", "true")
	if r.URL.Path == webhdfsPrefix || strings.HasPrefix(r.URL.Path, webhdfsPrefix+"/") {
		s.serveWebHDFS(w, r)
		return
	}
	if r.URL.Path != "/jmx" && r.URL.Path != "/conf" {
		http.Error(w, "heureka sim serves only /jmx, /conf and /webhdfs/v1", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/conf" {
		s.serveConf(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf8")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	code, body := s.jmx(r.URL.Query().Get("qry"), r.URL.Query().Get("get"))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// jmx answers a /jmx request: qry is an ObjectName pattern ("*:*" when
// empty), get a "Bean::Attribute". Malformed names are 400; a get of a
// missing attribute is 404 with an error result, as Hadoop answers.
func (s *Sim) jmx(qry, get string) (int, []byte) {
	beans := s.beans()
	if get != "" {
		bname, attrName, ok := strings.Cut(get, "::")
		if !ok || attrName == "" {
			return http.StatusBadRequest, writeError("query format is not as expected.")
		}
		p, ok := parsePattern(bname)
		if !ok {
			return http.StatusBadRequest, writeError("query format is not as expected.")
		}
		for _, b := range beans {
			if !p.match(b.name()) {
				continue
			}
			for _, a := range b[1:] {
				if a.k == attrName {
					return http.StatusOK, writeBeans([]bean{{b[0], b[1], a}})
				}
			}
			return http.StatusNotFound, writeError("No attribute with name " + attrName + " was found.")
		}
		return http.StatusNotFound, writeError("No bean with name " + bname + " was found.")
	}
	if qry == "" {
		qry = "*:*"
	}
	p, ok := parsePattern(qry)
	if !ok {
		return http.StatusBadRequest, writeError("query format is not as expected.")
	}
	var out []bean
	for _, b := range beans {
		if p.match(b.name()) {
			out = append(out, b)
		}
	}
	return http.StatusOK, writeBeans(out)
}

// pattern is a JMX ObjectName pattern: a domain glob and key=value globs;
// open says the key list ends in ",*" (other keys allowed).
type pattern struct {
	domain string
	props  map[string]string
	open   bool
}

func parsePattern(s string) (pattern, bool) {
	domain, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return pattern{}, false
	}
	p := pattern{domain: domain, props: map[string]string{}}
	for kv := range strings.SplitSeq(rest, ",") {
		if kv == "*" {
			p.open = true
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return pattern{}, false
		}
		p.props[k] = v
	}
	return p, true
}

func (p pattern) match(name string) bool {
	domain, rest, _ := strings.Cut(name, ":")
	if !glob(p.domain, domain) {
		return false
	}
	props := map[string]string{}
	for kv := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	if !p.open && len(props) != len(p.props) {
		return false
	}
	for k, pv := range p.props {
		v, ok := props[k]
		if !ok || !glob(pv, v) {
			return false
		}
	}
	return true
}

// glob matches s against a pattern of literal bytes, '*' (any run) and
// '?' (any one byte), as ObjectName patterns do.
func glob(pat, s string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if glob(pat[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != pat[0] {
				return false
			}
		}
		pat, s = pat[1:], s[1:]
	}
	return s == ""
}

// writeBeans renders beans the way Hadoop's servlet does through Jackson's
// default pretty printer: `"key" : value`, two-space indent, `[ {` and
// `}, {` between beans, bare NaN for non-finite doubles.
func writeBeans(beans []bean) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"beans\" : [")
	if len(beans) == 0 {
		b.WriteString(" ]\n}")
		return b.Bytes()
	}
	for i, bn := range beans {
		if i == 0 {
			b.WriteString(" {\n")
		} else {
			b.WriteString("}, {\n")
		}
		for j, a := range bn {
			b.WriteString("    ")
			writeString(&b, a.k)
			b.WriteString(" : ")
			writeValue(&b, a.v)
			if j < len(bn)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  ")
	}
	b.WriteString("} ]\n}")
	return b.Bytes()
}

func writeError(msg string) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"result\" : \"ERROR\",\n  \"message\" : ")
	writeString(&b, msg)
	b.WriteString("\n}")
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

func writeValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			s := strconv.FormatFloat(x, 'f', -1, 64)
			if !strings.Contains(s, ".") {
				s += ".0" // Java's Double.toString
			}
			b.WriteString(s)
		}
	case []string:
		if len(x) == 0 {
			b.WriteString("[ ]")
			return
		}
		b.WriteString("[ ")
		for i, s := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, s)
		}
		b.WriteString(" ]")
	default:
		panic(fmt.Sprintf("sim: attribute of type %T", v))
	}
}
