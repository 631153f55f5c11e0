package dnsapi

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batchConn reads and writes a UDP socket's datagrams in batches, with
// recvmmsg and sendmmsg, and has the kernel tell when each arrived
// (SO_TIMESTAMPNS). It is one worker's and not safe for concurrent use;
// the structures the kernel reads and writes are made once, so a batch
// allocates nothing.
type batchConn struct {
	rc    syscall.RawConn
	hdrs  []unix.Mmsghdr // for recvmmsg: one per datagram
	whdrs []unix.Mmsghdr // for sendmmsg: one per reply
	iovs  []unix.Iovec
	wiovs []unix.Iovec
	names []unix.RawSockaddrInet6 // the senders' addresses, big enough for either family
	ctls  [][]byte                // the arrival times, as control messages

	read, write func(fd uintptr) bool // the calls, made once
	b           *batch
	n           int // datagrams read
	k           int // replies to send
	first, sent int // replies sent before this call, and by it
	err         error
}

func newBatchConn(c *net.UDPConn, b *batch) (*batchConn, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("udp socket: %w", err)
	}
	k := len(b.in)
	bc := &batchConn{rc: rc, b: b, hdrs: make([]unix.Mmsghdr, k), whdrs: make([]unix.Mmsghdr, k),
		iovs: make([]unix.Iovec, k), wiovs: make([]unix.Iovec, k), names: make([]unix.RawSockaddrInet6, k),
		ctls: make([][]byte, k)}
	for i := range bc.ctls {
		bc.ctls[i] = make([]byte, unix.CmsgSpace(sizeofTimespec))
	}
	bc.read, bc.write = bc.recvmmsg, bc.sendmmsg
	// Without the option, arrival times are unknown and a query is timed
	// from its read.
	_ = rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
	return bc, nil
}

// readBatch reads at least one datagram, and as many more as are waiting
// up to the batch's size, and returns how many.
func (c *batchConn) readBatch() (int, error) {
	for i := range c.hdrs {
		c.iovs[i].Base = &c.b.in[i][0]
		c.iovs[i].SetLen(len(c.b.in[i]))
		h := &c.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&c.names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Iov = &c.iovs[i]
		h.SetIovlen(1)
		h.Control = &c.ctls[i][0]
		h.SetControllen(len(c.ctls[i]))
	}
	c.n, c.err = 0, nil
	if err := c.rc.Read(c.read); err != nil {
		return 0, err
	}
	if c.err != nil {
		return 0, fmt.Errorf("recvmmsg: %w", c.err)
	}
	for i := range c.n {
		c.b.n[i] = int(c.hdrs[i].Len)
		c.b.from[i] = sockaddrPort(&c.names[i], c.hdrs[i].Hdr.Namelen)
		c.b.at[i] = arrival(c.ctls[i][:c.hdrs[i].Hdr.Controllen])
	}
	return c.n, nil
}

// sizeofTimespec is the size of the kernel's timespec, the data of an
// SCM_TIMESTAMPNS message.
const sizeofTimespec = int(unsafe.Sizeof(unix.Timespec{}))

// arrival reads a datagram's arrival time from its control messages, as
// SO_TIMESTAMPNS has the kernel write it; zero when it is not there.
func arrival(ctl []byte) time.Time {
	if len(ctl) < unix.CmsgLen(sizeofTimespec) {
		return time.Time{}
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
	if h.Level != unix.SOL_SOCKET || h.Type != unix.SCM_TIMESTAMPNS {
		return time.Time{}
	}
	ts := (*unix.Timespec)(unsafe.Pointer(&ctl[unix.CmsgLen(0)]))
	return time.Unix(int64(ts.Sec), int64(ts.Nsec))
}

// recvmmsg and sendmmsg are raw system calls: the socket is non-blocking,
// so they return at once, and a call that the runtime saw enter the
// kernel would, past 20 µs, have its P handed to another thread, which on
// a server given one CPU is two threads taking turns on it for nothing.

func (c *batchConn) recvmmsg(fd uintptr) bool {
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&c.hdrs[0])), uintptr(len(c.hdrs)), 0, 0, 0)
	switch errno {
	case 0:
		c.n = int(n)
	case unix.EAGAIN, unix.EINTR:
		return false // wait until readable
	default:
		c.err = errno
	}
	return true
}

// writeBatch sends the replies to the first n datagrams read, to their
// senders; a datagram without a reply is skipped. A reply the kernel
// refuses is dropped, as a lost datagram is, and the error returned after
// the rest are sent.
func (c *batchConn) writeBatch(n int) error {
	k := 0
	defer func() { c.k = 0 }()
	for i := range n {
		if len(c.b.out[i]) == 0 {
			continue
		}
		c.wiovs[k].Base = &c.b.out[i][0]
		c.wiovs[k].SetLen(len(c.b.out[i]))
		h := &c.whdrs[k].Hdr
		h.Name = (*byte)(unsafe.Pointer(&c.names[i]))
		h.Namelen = c.hdrs[i].Hdr.Namelen
		h.Iov = &c.wiovs[k]
		h.SetIovlen(1)
		k++
	}
	c.k = k
	var failed error
	for c.first = 0; c.first < k; {
		c.sent, c.err = 0, nil
		if err := c.rc.Write(c.write); err != nil {
			return err
		}
		if c.err != nil {
			failed = fmt.Errorf("sendmmsg: %w", c.err)
			c.sent = 1 // skip the reply refused
		}
		c.first += c.sent
	}
	return failed
}

func (c *batchConn) sendmmsg(fd uintptr) bool {
	hs := c.whdrs[c.first:c.k]
	n, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&hs[0])), uintptr(len(hs)), 0, 0, 0)
	switch errno {
	case 0:
		c.sent = max(int(n), 1)
	case unix.EAGAIN, unix.EINTR:
		return false // wait until writable
	default:
		c.err = errno
	}
	return true
}

// sockaddrPort reads a sender's address as recvmmsg wrote it.
func sockaddrPort(sa *unix.RawSockaddrInet6, n uint32) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		if n < unix.SizeofSockaddrInet4 {
			return netip.AddrPort{}
		}
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port(sa4.Port))
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port(sa.Port))
	}
	return netip.AddrPort{}
}

// port reads a port as the kernel stores it, in network byte order.
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return binary.BigEndian.Uint16(b[:])
}
