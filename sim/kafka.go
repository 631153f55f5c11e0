package sim

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/heureka-project/heureka/kafka"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// kafkaModel simulates Kafka brokers with franz-go's kfake, a real
// implementation of the Kafka protocol (not Kafka): clients produce and
// consume through it. The cluster presents itself as a ZooKeeper-mode
// Kafka 3.9 (at most the API versions of 3.9 that kfake serves, with no
// finalized metadata.version, which only KRaft clusters have; no release
// can be guessed from them), whose controller is one of the brokers: kfake's last broker at first. kfake cannot move its
// controller, so the simulator answers a Metadata request for no topics
// (the one that asks for the brokers and the controller) itself, with the
// running brokers, their racks (ClusterConfig.Racks; kfake gives every
// broker "krack") and the controller it was told; requests for topics are
// kfake's. When the controller stops, the first running broker becomes
// controller at once, as the first broker to claim the controller znode
// does. Stop, start and pause act on a broker's listener and its
// connections, below kfake: a stopped broker's port refuses and its
// connections are cut; a paused broker accepts and reads nothing.
type kafkaModel struct {
	c     *Cluster
	kfake *kfake.Cluster
	lns   []*kafkaListener // by node id, which is the member index

	mu         sync.Mutex // guards controller; kfake's control function reads it
	controller int        // member index; -1 for none
}

const kafkaRole = kafka.RoleName

// zkModeVersions is Kafka 3.9's API versions without its feature table
// (KRaft's metadata.version): what a ZooKeeper-mode 3.9 broker advertises.
func zkModeVersions() *kversion.Versions {
	resp := kmsg.NewPtrApiVersionsResponse()
	kversion.V3_9_0().EachMaxKeyVersion(func(k, v int16) {
		key := kmsg.NewApiVersionsResponseApiKey()
		key.ApiKey, key.MaxVersion = k, v
		resp.ApiKeys = append(resp.ApiKeys, key)
	})
	return kversion.FromApiVersionsResponse(resp)
}

func newKafka(c *Cluster) *kafkaModel {
	m := &kafkaModel{c: c, controller: c.cfg.Members - 1} // kfake's own: its last broker
	for i := range c.cfg.Members {
		l := newKafkaListener()
		m.lns = append(m.lns, l)
		mb := &member{name: "broker" + strconv.Itoa(i), role: kafkaRole, version: c.cfg.Version, d: l}
		if len(c.cfg.Racks) > 0 {
			mb.rack = c.cfg.Racks[i%len(c.cfg.Racks)]
		}
		c.members = append(c.members, mb)
	}
	return m
}

// open starts kfake, whose brokers listen on free ports of the cluster's
// host, in node id order, each through its member's listener.
func (m *kafkaModel) open() error {
	next := 0
	listen := func(network, _ string) (net.Listener, error) {
		if next >= len(m.lns) {
			return nil, fmt.Errorf("sim: kfake asked for a listener beyond its %d brokers", len(m.lns))
		}
		ln, err := net.Listen(network, net.JoinHostPort(m.c.cfg.Host, "0"))
		if err != nil {
			return nil, err
		}
		l := m.lns[next]
		next++
		l.bind(ln)
		return l, nil
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(len(m.lns)), kfake.ClusterID(m.c.cfg.ClusterID),
		kfake.MaxVersions(zkModeVersions()), kfake.ListenFn(listen), kfake.AllowAutoTopicCreation(),
		kfake.SeedTopics(3, "heureka-sim"))
	if err != nil {
		for _, l := range m.lns {
			l.stop()
		}
		return fmt.Errorf("sim: kfake: %w", err)
	}
	m.kfake = kc
	kc.ControlKey(int16(kmsg.Metadata), m.metadata)
	return nil
}

// metadata answers a Metadata request for no topics with the running
// brokers and the simulator's controller; it leaves others to kfake. It
// runs on kfake's goroutines.
func (m *kafkaModel) metadata(kreq kmsg.Request) (kmsg.Response, error, bool) {
	m.kfake.KeepControl()
	req := kreq.(*kmsg.MetadataRequest)
	if req.Topics == nil || len(req.Topics) > 0 {
		return nil, nil, false
	}
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	m.mu.Lock()
	resp.ControllerID = -1
	if m.controller >= 0 {
		resp.ControllerID = int32(m.controller)
	}
	m.mu.Unlock()
	id := m.c.cfg.ClusterID
	resp.ClusterID = &id
	for i, l := range m.lns {
		if !l.running() {
			continue
		}
		host, port, _ := net.SplitHostPort(l.addr())
		p, _ := strconv.Atoi(port)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), host, int32(p)
		if r := m.c.members[i].rack; r != "" {
			b.Rack = &r
		}
		resp.Brokers = append(resp.Brokers, b)
	}
	return resp, nil, true
}

func (m *kafkaModel) answer(int, *http.Request) (int, []byte) {
	return http.StatusNotFound, nil // brokers speak the Kafka protocol
}

func (m *kafkaModel) state(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i == m.controller {
		return "controller"
	}
	return "broker"
}

func (m *kafkaModel) setState(i int, state string) error {
	if state != "controller" {
		return fmt.Errorf("sim: a Kafka broker's state is %s, not %q", m.states(), state)
	}
	if !m.lns[i].running() {
		return fmt.Errorf("sim: %s is stopped and cannot be the controller", m.c.members[i].name)
	}
	m.mu.Lock()
	m.controller = i
	m.mu.Unlock()
	return nil
}

func (m *kafkaModel) up(i int, running bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case running && m.controller < 0:
		m.controller = i
	case !running && m.controller == i:
		m.controller = -1
		for j, l := range m.lns {
			if l.running() {
				m.controller = j
				m.c.log.Info("the Kafka controller moved", "member", m.c.members[j].name)
				break
			}
		}
	}
}

func (m *kafkaModel) set(i int, key, value string) error {
	return fmt.Errorf("sim: a Kafka broker has version (shown on this page only), not %q", key)
}

func (m *kafkaModel) states() string { return "controller (the controller moves here)" }

func (m *kafkaModel) close() {
	if m.kfake != nil {
		m.kfake.Close()
	}
}

// kafkaListener is the listener kfake serves one broker on, with the
// broker's life below it: stop closes the real listener and cuts every
// connection (kfake's accept loop waits for start, which listens again on
// the same address), pause holds every read.
type kafkaListener struct {
	address string

	mu     sync.Mutex
	ln     net.Listener // nil while stopped
	conns  map[*pausableConn]struct{}
	gate   gate
	wake   chan struct{} // closed and replaced when ln is set or the listener closes
	closed bool
}

func newKafkaListener() *kafkaListener {
	return &kafkaListener{conns: map[*pausableConn]struct{}{}, gate: passing(), wake: make(chan struct{})}
}

// bind gives the listener its first real listener, and so its address.
func (l *kafkaListener) bind(ln net.Listener) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ln, l.address = ln, ln.Addr().String()
}

// Accept waits for a connection, across stops.
func (l *kafkaListener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		ln, wake, closed := l.ln, l.wake, l.closed
		l.mu.Unlock()
		switch {
		case closed:
			return nil, net.ErrClosed
		case ln == nil:
			<-wake
			continue
		}
		c, err := ln.Accept()
		l.mu.Lock()
		if err != nil {
			same := l.ln == ln && !l.closed
			l.mu.Unlock()
			if same {
				return nil, err
			}
			continue // stopped or closed: look again
		}
		if l.ln != ln {
			l.mu.Unlock()
			c.Close()
			continue
		}
		pc := &pausableConn{Conn: c, l: l, done: make(chan struct{})}
		l.conns[pc] = struct{}{}
		l.mu.Unlock()
		return pc, nil
	}
}

// Close is kfake's: the cluster is shutting down.
func (l *kafkaListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.ln != nil {
		l.ln.Close()
	}
	close(l.wake)
	return nil
}

func (l *kafkaListener) Addr() net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", l.address)
	return a
}

func (l *kafkaListener) start() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.ln != nil || l.closed:
		return nil
	case l.address == "":
		return fmt.Errorf("the broker has no address yet")
	}
	ln, err := net.Listen("tcp", l.address)
	if err != nil {
		return err
	}
	l.ln = ln
	close(l.wake)
	l.wake = make(chan struct{})
	return nil
}

func (l *kafkaListener) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln == nil {
		return
	}
	l.ln.Close()
	l.ln = nil
	for c := range l.conns {
		c.closeOnce()
	}
	clear(l.conns)
	l.gate.release()
}

func (l *kafkaListener) pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil && !l.gate.paused() {
		l.gate = make(gate)
	}
}

func (l *kafkaListener) resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gate.release()
}

func (l *kafkaListener) addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.address
}

func (l *kafkaListener) running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ln != nil
}

func (l *kafkaListener) paused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gate.paused()
}

// pausableConn is a broker's connection: what it reads waits while the
// broker is paused, so kfake sees no request until it resumes.
type pausableConn struct {
	net.Conn
	l    *kafkaListener
	done chan struct{}
	once sync.Once
}

func (c *pausableConn) Read(p []byte) (int, error) {
	if err := c.wait(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		// Bytes that came in while paused wait for the resume too.
		if werr := c.wait(); werr != nil {
			return 0, werr
		}
	}
	return n, err
}

// wait blocks while the broker is paused; it fails once the connection
// is closed.
func (c *pausableConn) wait() error {
	c.l.mu.Lock()
	gate := c.l.gate
	c.l.mu.Unlock()
	select {
	case <-gate:
		return nil
	case <-c.done:
		return net.ErrClosed
	}
}

func (c *pausableConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.closeOnce()
}

func (c *pausableConn) closeOnce() error {
	var err error
	c.once.Do(func() {
		close(c.done)
		err = c.Conn.Close()
	})
	return err
}
