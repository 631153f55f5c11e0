package replication

import (
	"fmt"
	"testing"
)

// BenchmarkToldMask is what resolving heureka.ToldPeersHeader adds to a
// forwarded heartbeat: a value seen before (every agent's, after its
// first beat) is one lookup in the cache; one never seen is a parse of
// each URL in it. Three peers, an agent naming all three.
func BenchmarkToldMask(b *testing.B) {
	peers := []string{"http://reg1.example.com:8761/eureka", "http://reg2.example.com:8761/eureka", "http://reg3.example.com:8761/eureka"}
	value := peers[0] + "," + peers[1] + "," + peers[2]
	b.Run("cached", func(b *testing.B) {
		t := newTold(peers)
		if t.mask(value) != 0b111 {
			b.Fatal("the value does not name the three peers")
		}
		b.ReportAllocs()
		for b.Loop() {
			if t.mask(value) != 0b111 {
				b.Fatal("wrong mask")
			}
		}
	})
	b.Run("parsed", func(b *testing.B) {
		t := newTold(peers)
		b.ReportAllocs()
		for b.Loop() {
			if t.resolve(value) != 0b111 {
				b.Fatal("wrong mask")
			}
		}
	})
	// Values arriving once each, past the cache's size: each is parsed and
	// the cache is copied with it, or started again.
	b.Run("distinct", func(b *testing.B) {
		t := newTold(peers)
		values := make([]string, 4*toldCacheSize)
		for i := range values {
			values[i] = fmt.Sprintf("http://agent%d:8761/eureka,%s", i, peers[1])
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if t.mask(values[i%len(values)]) != 0b010 {
				b.Fatal("wrong mask")
			}
			i++
		}
	})
}
