package dnsapi

import (
	"net"
	"slices"
	"testing"
	"time"
)

// TestBatchConnReadsArrivalAndSender: a batch read returns each datagram
// with its sender's address and the kernel's time of its arrival, and a
// reply goes back to that sender.
func TestBatchConnReadsArrivalAndSender(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	b := newBatch(4, 512)
	bc, err := newBatchConn(pc, b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent := time.Now()
	for _, m := range []string{"one", "two"} {
		if _, err := c.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	// Both are queued by now (a loopback send delivers before it
	// returns), and one read takes as many as are waiting; read on if
	// the machine parted them.
	var got []string
	for len(got) < 2 {
		n, err := bc.readBatch()
		read := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if b.from[i].String() != c.LocalAddr().String() {
				t.Errorf("datagram from %s; want %s", b.from[i], c.LocalAddr())
			}
			if at := b.at[i]; at.Before(sent.Add(-time.Millisecond)) || at.After(read) {
				t.Errorf("datagram arrived at %v; sent at %v, read at %v", at, sent, read)
			}
			got = append(got, string(b.in[i][:b.n[i]]))
			b.out[i] = append(b.buf[i][:0], "re:"+got[len(got)-1]...)
		}
		if err := bc.writeBatch(n); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("read %q; want one, two", got)
	}
	buf := make([]byte, 64)
	for _, want := range []string{"re:one", "re:two"} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, err := c.Read(buf)
		if err != nil || string(buf[:k]) != want {
			t.Fatalf("reply %q, %v; want %q", buf[:k], err, want)
		}
	}
}
