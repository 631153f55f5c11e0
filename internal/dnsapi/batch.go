package dnsapi

import (
	"net/netip"
	"time"
)

// batchSize is how many datagrams a UDP worker reads and writes in one
// system call where the system has recvmmsg and sendmmsg (Linux): under
// load the calls, not the answers, are most of a query's cost.
const batchSize = 32

// batch is a UDP worker's datagrams: the queries read into in (n[i] bytes
// each, from from[i], arrived at[i] by the kernel's clock where it tells,
// else zero) and the replies to send (out[i], none when empty), made in
// buf[i]'s storage. batchConn's implementations fill and send it.
type batch struct {
	in   [][]byte
	n    []int
	from []netip.AddrPort
	at   []time.Time
	out  [][]byte
	buf  [][]byte
}

func newBatch(size, maxUDP int) *batch {
	b := &batch{in: make([][]byte, size), n: make([]int, size), from: make([]netip.AddrPort, size),
		at: make([]time.Time, size), out: make([][]byte, size), buf: make([][]byte, size)}
	for i := range b.in {
		b.in[i] = make([]byte, readSize)
		b.buf[i] = make([]byte, 0, max(maxUDP, 2048))
	}
	return b
}
