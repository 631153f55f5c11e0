package dnsapi

import "net/netip"

// batchSize is how many datagrams a UDP worker reads and writes in one
// system call where the system has recvmmsg and sendmmsg (Linux): under
// load the calls, not the answers, are most of a query's cost.
const batchSize = 32

// batch is a UDP worker's datagrams: the queries read into in (n[i] bytes
// each, from from[i]) and the replies to send (out[i], none when empty),
// made in buf[i]'s storage. batchConn's implementations fill and send it.
type batch struct {
	in   [][]byte
	n    []int
	from []netip.AddrPort
	out  [][]byte
	buf  [][]byte
}

func newBatch(size, maxUDP int) *batch {
	b := &batch{in: make([][]byte, size), n: make([]int, size), from: make([]netip.AddrPort, size),
		out: make([][]byte, size), buf: make([][]byte, size)}
	for i := range b.in {
		b.in[i] = make([]byte, readSize)
		b.buf[i] = make([]byte, 0, max(maxUDP, 2048))
	}
	return b
}
