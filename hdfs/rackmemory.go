package hdfs

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/heureka-project/heureka"
)

// DefaultRackMemorySize bounds a RackMemory: 40,000 entries hold 20,000
// nodes by both host name and IP address (AnswerRacks learns both), and at
// about 50 bytes an entry the file stays near 2 MB and reads in a few
// milliseconds, which the topology script pays on every call.
const DefaultRackMemorySize = 40000

// RackMemory is what a topology script remembers between calls for when
// the registry cannot be read: the racks it last answered, by host name
// or IP address, at most Max of them, the least recently changed
// forgotten first.
// It holds only answers that came from the registry; a host it does not
// know gets DefaultRack as from the registry. The zero value is empty and
// unbounded. It is not safe for concurrent use.
type RackMemory struct {
	Max     int
	entries []rackEntry // least recently changed first
	index   map[string]int
}

type rackEntry struct{ host, rack string }

// rackMemoryFile is the stored form: a version and the entries in order.
type rackMemoryFile struct {
	Version int         `json:"version"`
	Racks   [][2]string `json:"racks"` // [host key, rack], least recently changed first
}

const rackMemoryVersion = 1

// ReadRackMemory reads a memory written by WriteTo, bounded to max entries
// (the newest kept); max <= 0 means DefaultRackMemorySize.
func ReadRackMemory(r io.Reader, max int) (*RackMemory, error) {
	if max <= 0 {
		max = DefaultRackMemorySize
	}
	var f rackMemoryFile
	if err := json.NewDecoder(io.LimitReader(r, int64(max)*(2*256+16)+1024)).Decode(&f); err != nil {
		return nil, fmt.Errorf("rack memory: %w", err)
	}
	if f.Version != rackMemoryVersion {
		return nil, fmt.Errorf("rack memory: version %d, want %d", f.Version, rackMemoryVersion)
	}
	m := &RackMemory{Max: max}
	for _, e := range f.Racks {
		m.set(heureka.HostKey(e[0]), NormalizeRack(e[1]))
	}
	m.trim()
	return m, nil
}

// Rack returns what the memory knows of host.
func (m *RackMemory) Rack(host string) (string, bool) {
	i, ok := m.index[heureka.HostKey(host)]
	if !ok {
		return "", false
	}
	return m.entries[i].rack, true
}

// Len is how many hosts it knows.
func (m *RackMemory) Len() int { return len(m.entries) }

// Learn records rack as host's answer, and reports whether that changed
// the memory (a new host or another rack).
func (m *RackMemory) Learn(host, rack string) bool {
	k, rack := heureka.HostKey(host), NormalizeRack(rack)
	if i, ok := m.index[k]; ok && m.entries[i].rack == rack {
		return false
	}
	m.set(k, rack)
	m.trim()
	return true
}

func (m *RackMemory) set(k, rack string) {
	if k == "" {
		return
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	if i, ok := m.index[k]; ok {
		m.entries = append(m.entries[:i], m.entries[i+1:]...)
		m.reindex(i)
	}
	m.index[k] = len(m.entries)
	m.entries = append(m.entries, rackEntry{k, rack})
}

// trim forgets the oldest entries beyond Max.
func (m *RackMemory) trim() {
	if m.Max <= 0 || len(m.entries) <= m.Max {
		return
	}
	drop := len(m.entries) - m.Max
	for _, e := range m.entries[:drop] {
		delete(m.index, e.host)
	}
	m.entries = append(m.entries[:0], m.entries[drop:]...)
	m.reindex(0)
}

func (m *RackMemory) reindex(from int) {
	for i := from; i < len(m.entries); i++ {
		m.index[m.entries[i].host] = i
	}
}

// WriteTo writes the memory as JSON, for ReadRackMemory.
func (m *RackMemory) WriteTo(w io.Writer) (int64, error) {
	f := rackMemoryFile{Version: rackMemoryVersion, Racks: make([][2]string, 0, len(m.entries))}
	for _, e := range m.entries {
		f.Racks = append(f.Racks, [2]string{e.host, e.rack})
	}
	b, err := json.Marshal(f)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(append(b, '\n'))
	return int64(n), err
}

// TopologyRacks is TopologyLookup's answer as a slice: the rack of each of
// args, in order, with known reporting which ones a node matched.
func TopologyRacks(args []string, nodes []*heureka.Instance) (racks []string, known []bool) {
	racks, by := matchRacks(args, nodes)
	known = make([]bool, len(args))
	for i, in := range by {
		known[i] = in != nil
	}
	return racks, known
}

// matchRacks is TopologyRacks with the instance each argument matched (nil
// for none).
func matchRacks(args []string, nodes []*heureka.Instance) (racks []string, by []*heureka.Instance) {
	type entry struct {
		in   *heureka.Instance
		rack string
	}
	better := func(a, b *heureka.Instance) bool { // a preferred over b
		if (a.Status == heureka.StatusUp) != (b.Status == heureka.StatusUp) {
			return a.Status == heureka.StatusUp
		}
		if a.LastUpdatedTimestamp != b.LastUpdatedTimestamp {
			return a.LastUpdatedTimestamp > b.LastUpdatedTimestamp
		}
		return a.ID < b.ID
	}
	idx := map[string]entry{}
	add := func(key string, in *heureka.Instance) {
		if key == "" {
			return
		}
		if e, ok := idx[key]; ok && !better(in, e.in) {
			return
		}
		idx[key] = entry{in, NormalizeRack(in.Metadata.Get(MetaRack))}
	}
	for _, in := range nodes {
		if in == nil {
			continue
		}
		add("h:"+strings.ToLower(strings.TrimSpace(in.HostName)), in)
		add("i:"+strings.TrimSpace(in.IPAddr), in)
	}
	racks, by = make([]string, len(args)), make([]*heureka.Instance, len(args))
	for i, a := range args {
		a = strings.TrimSpace(a)
		racks[i] = DefaultRack
		if a == "" {
			continue
		}
		if e, ok := idx["i:"+a]; ok {
			racks[i], by[i] = e.rack, e.in
		} else if e, ok := idx["h:"+strings.ToLower(a)]; ok {
			racks[i], by[i] = e.rack, e.in
		}
	}
	return racks, by
}

// WriteRacks writes racks one per line, the topology script's output.
func WriteRacks(w io.Writer, racks []string) error {
	var b strings.Builder
	for _, r := range racks {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
