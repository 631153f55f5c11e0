//go:build !linux

package dnsapi

import "net"

// batchConn reads and writes one datagram at a time where the system has
// no recvmmsg and sendmmsg.
type batchConn struct {
	c *net.UDPConn
	b *batch
}

func newBatchConn(c *net.UDPConn, b *batch) (*batchConn, error) { return &batchConn{c: c, b: b}, nil }

// readBatch reads one datagram.
func (c *batchConn) readBatch() (int, error) {
	n, from, err := c.c.ReadFromUDPAddrPort(c.b.in[0])
	if err != nil {
		return 0, err
	}
	c.b.n[0], c.b.from[0] = n, from
	return 1, nil
}

// writeBatch sends the replies to the first n datagrams read; a datagram
// without a reply is skipped. The first error is returned after the rest
// are sent.
func (c *batchConn) writeBatch(n int) error {
	var failed error
	for i := range n {
		if len(c.b.out[i]) == 0 {
			continue
		}
		if _, err := c.c.WriteToUDPAddrPort(c.b.out[i], c.b.from[i]); err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}
