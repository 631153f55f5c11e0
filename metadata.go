package heureka

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Metadata is an instance's metadata: string keys, each with one string
// value, in key order. A Metadata is never changed once built: With and
// Without return new ones. So a stored instance's metadata can be handed to
// every reader without a copy, and no reader can change what another sees.
// The zero value is empty and ready to use.
//
// It is kept as one block holding no pointer, rather than as a map: a
// DataNode's twenty entries take about 700 bytes in one heap object, where a
// map of them takes about 1.3 KB and two dozen objects for the garbage
// collector to visit, and a registry holds one per instance. The block is
// the number of keys n, then 2n offsets, then the text; all numbers are
// 32-bit little-endian. A lookup is a binary search over the keys.
type Metadata struct {
	// n, ends[0 … 2n-1], k0 v0 k1 v1 …: keys in order, each once;
	// ends[2i] is where key i ends in block, ends[2i+1] where value i ends.
	block string
}

// u32 reads the 32-bit little-endian number at s[o:].
func u32(s string, o int) int {
	s = s[o : o+4] // one bounds check, and one 32-bit load
	return int(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
}

func writeU32(b *strings.Builder, v int) {
	b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
}

// NewMetadata builds a Metadata from key, value pairs. A key given more
// than once keeps its last value. It panics on an odd number of strings.
func NewMetadata(kv ...string) Metadata {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("heureka.NewMetadata: %d strings is not a list of key, value pairs", len(kv)))
	}
	n := len(kv) / 2
	if n == 0 {
		return Metadata{}
	}
	var buf [64]int // on the stack for every metadata within the default limits
	order := buf[:0]
	if n > len(buf) {
		order = make([]int, 0, n)
	}
	for i := range n {
		order = append(order, i)
	}
	// Stable, so that among equal keys the last given comes last.
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(kv[2*a], kv[2*b]) })
	kept := order[:0]
	size := 0
	for i, p := range order {
		if i+1 < len(order) && kv[2*order[i+1]] == kv[2*p] {
			continue // a later pair sets this key
		}
		kept = append(kept, p)
		size += len(kv[2*p]) + len(kv[2*p+1])
	}
	end := 4 + 8*len(kept) // where the first key starts
	var b strings.Builder
	b.Grow(end + size)
	writeU32(&b, len(kept))
	for _, p := range kept {
		end += len(kv[2*p])
		writeU32(&b, end)
		end += len(kv[2*p+1])
		writeU32(&b, end)
	}
	for _, p := range kept {
		b.WriteString(kv[2*p])
		b.WriteString(kv[2*p+1])
	}
	return Metadata{block: b.String()}
}

// MetadataOf builds a Metadata holding what m holds.
func MetadataOf(m map[string]string) Metadata {
	kv := make([]string, 0, 2*len(m))
	for k, v := range m {
		kv = append(kv, k, v)
	}
	return NewMetadata(kv...)
}

// Len is the number of keys.
func (m Metadata) Len() int {
	if m.block == "" {
		return 0
	}
	return u32(m.block, 0)
}

// end is ends[j]; end(-1) is where the text starts.
func (m Metadata) end(j int) int {
	if j < 0 {
		return 4 + 8*m.Len()
	}
	return u32(m.block, 4+4*j)
}

func (m Metadata) key(i int) string {
	end := u32(m.block, 4+8*i)
	if i == 0 {
		return m.block[4+8*m.Len() : end]
	}
	return m.block[u32(m.block, 8*i):end] // where value i-1 ends
}

func (m Metadata) value(i int) string { return m.block[m.end(2*i):m.end(2*i+1)] }

// find is the index of key k, or where it would go, and whether it is there.
func (m Metadata) find(k string) (int, bool) {
	n := m.Len()
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.key(mid) < k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < n && m.key(lo) == k
}

// Lookup returns k's value and whether k is present.
func (m Metadata) Lookup(k string) (string, bool) {
	i, ok := m.find(k)
	if !ok {
		return "", false
	}
	return m.value(i), true
}

// Get returns k's value, or "" when k is absent.
func (m Metadata) Get(k string) string {
	v, _ := m.Lookup(k)
	return v
}

// Has reports whether k is present.
func (m Metadata) Has(k string) bool {
	_, ok := m.find(k)
	return ok
}

// All yields every key and its value, in key order.
func (m Metadata) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i := range m.Len() {
			if !yield(m.key(i), m.value(i)) {
				return
			}
		}
	}
}

// Keys yields every key, in order.
func (m Metadata) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := range m.Len() {
			if !yield(m.key(i)) {
				return
			}
		}
	}
}

// IsZero reports whether m is empty, for encoding/json's omitzero.
func (m Metadata) IsZero() bool { return m.Len() == 0 }

// Size is the length of every key and value together.
func (m Metadata) Size() int {
	if m.block == "" {
		return 0
	}
	return len(m.block) - m.end(-1)
}

// Equal reports whether m and o hold the same keys with the same values.
// The form is canonical (keys in order, each once), so this compares two
// blocks.
func (m Metadata) Equal(o Metadata) bool { return m.block == o.block }

// ChangedKeys returns, in order, the keys whose values differ between m
// and o, or that only one of them holds; nil when they hold the same.
func (m Metadata) ChangedKeys(o Metadata) []string {
	if m.Equal(o) {
		return nil
	}
	var keys []string
	i, j := 0, 0
	for i < m.Len() || j < o.Len() {
		switch {
		case j == o.Len() || i < m.Len() && m.key(i) < o.key(j):
			keys = append(keys, m.key(i))
			i++
		case i == m.Len() || o.key(j) < m.key(i):
			keys = append(keys, o.key(j))
			j++
		default:
			if m.value(i) != o.value(j) {
				keys = append(keys, m.key(i))
			}
			i++
			j++
		}
	}
	return keys
}

// With returns m with each key, value pair of kv set; a key given more than
// once keeps its last value. It panics on an odd number of strings.
func (m Metadata) With(kv ...string) Metadata {
	if len(kv) == 0 {
		return m
	}
	all := make([]string, 0, 2*m.Len()+len(kv))
	for k, v := range m.All() {
		all = append(all, k, v)
	}
	return NewMetadata(append(all, kv...)...)
}

// Without returns m without keys.
func (m Metadata) Without(keys ...string) Metadata {
	drop := false
	for _, k := range keys {
		drop = drop || m.Has(k)
	}
	if !drop {
		return m
	}
	kv := make([]string, 0, 2*m.Len())
	for k, v := range m.All() {
		if !slices.Contains(keys, k) {
			kv = append(kv, k, v)
		}
	}
	return NewMetadata(kv...)
}

// Map returns a new map holding what m holds; it is never nil.
func (m Metadata) Map() map[string]string {
	out := make(map[string]string, m.Len())
	for k, v := range m.All() {
		out[k] = v
	}
	return out
}

// String writes m as fmt writes a map: map[k0:v0 k1:v1].
func (m Metadata) String() string {
	var b strings.Builder
	b.WriteString("map[")
	for i := range m.Len() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(m.key(i))
		b.WriteByte(':')
		b.WriteString(m.value(i))
	}
	b.WriteByte(']')
	return b.String()
}

// MarshalJSON writes m as a JSON object, keys in order.
func (m Metadata) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i := range m.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.key(i))
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value(i))
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a JSON object of string values (or null, for empty).
func (m *Metadata) UnmarshalJSON(b []byte) error {
	var raw map[string]string
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	*m = MetadataOf(raw)
	return nil
}
