package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/heureka-project/heureka/hdfs"
)

// Sim is one simulated HDFS daemon. Build it with New, then Open.
type Sim struct {
	cfg     Config
	log     *slog.Logger
	started time.Time

	mu      sync.Mutex
	opened  bool
	closed  bool
	running bool
	st      figures
	// The daemon's listeners, set while running. The addresses are fixed
	// at the first start, so a restart comes back where it was.
	httpAddr, portAddr string
	httpSrv            *http.Server
	portLn             net.Listener
	conns              map[net.Conn]struct{}
	ctrlLn             net.Listener
	ctrlSrv            *http.Server
	wg                 sync.WaitGroup // serving goroutines
	// WebHDFS writes received (DataNodes), see webhdfs.go.
	writes int64
	recent []string
	ha     HA // a NameNode's HA nameservice, shown at /conf (conf.go)
}

// figures are the simulated daemon's changeable state.
type figures struct {
	capacity, used, blocks int64
	version                string
	ha                     hdfs.HAState
	haTransition           int64 // ms since the epoch
	safemode               bool
}

// State is a snapshot of a Sim, as GET /sim/state reports it.
type State struct {
	Role      hdfs.Role `json:"role"`
	Simulated bool      `json:"simulated"`
	Running   bool      `json:"running"`
	HTTPAddr  string    `json:"http"`
	PortAddr  string    `json:"port"`
	Control   string    `json:"control"`
	Hostname  string    `json:"hostname"`
	Version   string    `json:"version"`
	Capacity  int64     `json:"capacity"`
	Used      int64     `json:"used"`
	Blocks    int64     `json:"blocks"`
	// NameNodes only.
	HAState          hdfs.HAState `json:"ha_state,omitempty"`
	HATransitionTime int64        `json:"ha_transition_time,omitempty"`
	Safemode         bool         `json:"safemode,omitempty"`
	// WebHDFS is set when the simulated WebHDFS surface is on.
	WebHDFS *WebHDFSState `json:"webhdfs,omitempty"`
}

// New returns a simulator for cfg. It listens on nothing until Open.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.PortAddr, _ = cfg.portAddr() // checked by Validate
	cfg.Volumes = append([]string(nil), cfg.Volumes...)
	cfg.WebHDFS.DataNodes = append([]DataNodeAddr(nil), cfg.WebHDFS.DataNodes...)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	now := time.Now()
	s := &Sim{
		cfg:     cfg,
		log:     logger.With("subsystem", "sim", "role", string(cfg.Role)),
		started: now,
		conns:   map[net.Conn]struct{}{},
		st: figures{
			capacity: cfg.Capacity, used: cfg.Used, blocks: cfg.Blocks,
			version: cfg.Version, ha: cfg.HAState,
		},
	}
	if cfg.Role == hdfs.RoleNameNode {
		// Hadoop stamps the move out of "initializing" at start.
		s.st.haTransition = now.UnixMilli()
	}
	return s, nil
}

// Open listens on the control address and, unless Config.Stopped, starts
// the daemon. Errors (a busy port, say) come back here.
func (s *Sim) Open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened || s.closed {
		return errors.New("sim: already opened")
	}
	ln, err := net.Listen("tcp", s.cfg.ControlAddr)
	if err != nil {
		return fmt.Errorf("sim: control listener: %w", err)
	}
	s.ctrlLn = ln
	s.ctrlSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.httpAddr, s.portAddr = s.cfg.HTTPAddr, s.cfg.PortAddr
	if !s.cfg.Stopped {
		if err := s.startLocked(); err != nil {
			ln.Close()
			return err
		}
	}
	s.opened = true
	s.wg.Go(func() {
		if err := s.ctrlSrv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("control server ended", "err", err)
		}
	})
	return nil
}

// Start brings a stopped daemon back on the addresses it had. Starting a
// running daemon does nothing.
func (s *Sim) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.opened || s.closed:
		return errors.New("sim: not open")
	case s.running:
		return nil
	}
	return s.startLocked()
}

func (s *Sim) startLocked() error {
	hln, err := net.Listen("tcp", s.httpAddr)
	if err != nil {
		return fmt.Errorf("sim: http listener: %w", err)
	}
	pln, err := net.Listen("tcp", s.portAddr)
	if err != nil {
		hln.Close()
		return fmt.Errorf("sim: %s listener: %w", s.portName(), err)
	}
	s.httpAddr, s.portAddr = hln.Addr().String(), pln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(s.serveDaemon), ReadHeaderTimeout: 10 * time.Second}
	s.httpSrv, s.portLn, s.running = srv, pln, true
	s.wg.Go(func() {
		if err := srv.Serve(hln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("jmx server ended", "err", err)
		}
	})
	s.wg.Go(func() { s.acceptLoop(pln) })
	s.log.Info("simulated daemon started", "http", s.httpAddr, "port", s.portAddr)
	return nil
}

// Stop makes the daemon vanish as if its process had died: the /jmx and
// data/RPC listeners close and every open connection on them is cut. The
// control API keeps answering. Stopping a stopped daemon does nothing.
func (s *Sim) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

func (s *Sim) stopLocked() {
	if !s.running {
		return
	}
	s.running = false
	_ = s.httpSrv.Close() // the listener and every connection
	_ = s.portLn.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	clear(s.conns)
	s.log.Info("simulated daemon stopped")
}

// Close stops the daemon and the control API and waits for their
// goroutines, bounded by ctx. It is idempotent.
func (s *Sim) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.stopLocked()
	ctrl := s.ctrlSrv
	s.mu.Unlock()
	if ctrl != nil {
		if err := ctrl.Shutdown(ctx); err != nil {
			_ = ctrl.Close()
		}
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// acceptLoop accepts connections on the data/RPC port and holds each open
// until its peer closes it or the daemon stops.
func (s *Sim) acceptLoop(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed by Stop
		}
		s.mu.Lock()
		if s.portLn != ln || !s.running {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			_, _ = io.Copy(io.Discard, c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		})
	}
}

func (s *Sim) portName() string {
	if s.cfg.Role == hdfs.RoleNameNode {
		return "rpc"
	}
	return "data"
}

// Running reports whether the daemon is up (started and not stopped).
func (s *Sim) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// HTTPAddr is the /jmx listener's address, "" before Open.
func (s *Sim) HTTPAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpAddr
}

// PortAddr is the data/RPC listener's address, "" before Open.
func (s *Sim) PortAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.portAddr
}

// ControlAddr is the control API's address, "" before Open.
func (s *Sim) ControlAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctrlLn == nil {
		return ""
	}
	return s.ctrlLn.Addr().String()
}

// State returns a snapshot of the simulator.
func (s *Sim) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{
		Role: s.cfg.Role, Simulated: true, Running: s.running,
		HTTPAddr: s.httpAddr, PortAddr: s.portAddr, Hostname: s.cfg.Hostname,
		Version: s.st.version, Capacity: s.st.capacity, Used: s.st.used, Blocks: s.st.blocks,
	}
	if s.ctrlLn != nil {
		st.Control = s.ctrlLn.Addr().String()
	}
	if s.cfg.Role == hdfs.RoleNameNode {
		st.HAState, st.HATransitionTime, st.Safemode = s.st.ha, s.st.haTransition, s.st.safemode
	}
	s.webhdfsStateLocked(&st)
	return st
}

// SetHAState moves a NameNode to state, stamping LastHATransitionTime when
// the state changes. It is an error for a DataNode or an unknown state.
func (s *Sim) SetHAState(state hdfs.HAState) error {
	if s.cfg.Role != hdfs.RoleNameNode {
		return errors.New("sim: a DataNode has no HA state")
	}
	st, ok := hdfs.ParseHAState(string(state))
	if !ok {
		return fmt.Errorf("sim: %q is not one of active, standby, observer, initializing, stopping", state)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.ha != st {
		s.st.ha = st
		s.st.haTransition = max(time.Now().UnixMilli(), s.st.haTransition+1)
		s.log.Info("HA state changed", "state", string(st))
	}
	return nil
}

// Update changes the simulated figures; a negative value leaves a figure
// as it is. Used above capacity is an error.
func (s *Sim) Update(capacity, used, blocks int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, u, b := s.st.capacity, s.st.used, s.st.blocks
	if capacity >= 0 {
		c = capacity
	}
	if used >= 0 {
		u = used
	}
	if blocks >= 0 {
		b = blocks
	}
	if u > c {
		return fmt.Errorf("used %s (%d bytes) would be more than the capacity, %s (%d bytes); raise capacity= too", FormatBytes(u), u, FormatBytes(c), c)
	}
	s.st.capacity, s.st.used, s.st.blocks = c, u, b
	return nil
}

// SetVersion changes the Hadoop version the daemon reports, as after an
// upgrade.
func (s *Sim) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.version = v
}

// SetSafemode puts a NameNode in or out of safe mode (FSState safeMode).
func (s *Sim) SetSafemode(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.safemode = on
}

// Run is a simulated daemon's program, as Cluster.Run is a cluster's: it
// opens the daemon, writes pid to pidFile (when not ""; removed on return),
// logs one line with its addresses (http=, port=, control=), answers each
// HA state sent on ha (nil: none) until ctx ends, and then closes it.
func (s *Sim) Run(ctx context.Context, pid int, pidFile string, ha <-chan hdfs.HAState) error {
	if err := s.Open(); err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(cctx) // idempotent: a no-op after the Close below
	}()
	if pidFile != "" {
		remove, err := WritePIDFile(pidFile)
		if err != nil {
			return err
		}
		defer remove()
	}
	s.log.Info("heureka sim listening", "role", string(s.cfg.Role), "simulated", true,
		"http", s.HTTPAddr(), "port", s.PortAddr(), "control", s.ControlAddr(), "pid", pid)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case st := <-ha:
			if err := s.SetHAState(st); err != nil {
				s.log.Warn("ignoring the HA state asked", "state", string(st), "err", err)
			}
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(cctx); err != nil {
		return err
	}
	s.log.Info("heureka sim stopped")
	return nil
}
