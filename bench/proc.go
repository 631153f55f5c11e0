package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/bench/internal/procstat"
)

// proc is a server process the benchmark started: heureka, etcd or a
// ZooKeeper JVM. Its output goes to a log file in the run's temp dir.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // its exit error, valid after done
}

// startProc starts argv with its stdout and stderr in logPath. onLine, when
// not nil, sees each stderr line until it returns true.
func startProc(name, logPath string, argv []string, env []string, onLine func(string) bool) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = f
	// Each server gets its own process group, so that a ^C to the
	// benchmark reaches the benchmark only and it stops them itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if onLine != nil {
		cmd.Stderr = &lineTee{f: f, fn: onLine}
	} else {
		cmd.Stderr = f
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// lineTee writes everything to f and hands complete lines to fn until fn
// returns true.
type lineTee struct {
	f    io.Writer
	fn   func(string) bool
	mu   sync.Mutex
	buf  []byte
	done bool
}

func (t *lineTee) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		t.buf = append(t.buf, b...)
		for {
			i := strings.IndexByte(string(t.buf), '\n')
			if i < 0 {
				break
			}
			line := string(t.buf[:i])
			t.buf = t.buf[i+1:]
			if t.fn(line) {
				t.done, t.buf = true, nil
				break
			}
		}
	}
	return t.f.Write(b)
}

// pid is the process's id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs. It is idempotent.
func (p *proc) stop(grace time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last lines of the process's log, for error messages.
func (p *proc) tail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

// machine describes the host for the report.
type machine struct {
	CPU    string
	Cores  int
	Memory int64 // bytes
	Kernel string
	Go     string
}

func readMachine() machine {
	m := machine{Cores: 0}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "processor":
				m.Cores++
			case "model name":
				m.CPU = strings.TrimSpace(v)
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				m.Memory = kb << 10
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitFor calls ready every 100 ms until it returns nil, p exits or ctx ends.
func waitFor(ctx context.Context, p *proc, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("%s exited at start: %v\n%s", p.name, p.err, p.tail())
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		last = ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v: %v\n%s", p.name, timeout, last, p.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// raiseFileLimit lifts the soft open-files limit to the hard one: thousands
// of watchers are thousands of sockets, here and in the servers we start.
func raiseFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	rl.Cur = rl.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}

// cpuMeter measures, over an interval, the CPU used by the machine as a
// whole, by this process and by one server, so that the report can say
// how much of the machine other processes took meanwhile (this benchmark
// may share its machine).
type cpuMeter struct {
	at          time.Time
	total, self time.Duration
	srv         procstat.Usage
	pid         int
}

func startMeter(pid int) cpuMeter {
	m := cpuMeter{at: time.Now(), total: machineBusy(), pid: pid}
	m.self = selfCPU()
	m.srv, _ = procstat.Read(pid)
	return m
}

// read returns, in cores, the CPU used since the meter started by the
// server, by the benchmark itself and by everything else.
func (m cpuMeter) read() (server, bench, others float64) {
	el := time.Since(m.at).Seconds()
	u, _ := procstat.Read(m.pid)
	server = (u.CPU - m.srv.CPU).Seconds() / el
	bench = (selfCPU() - m.self).Seconds() / el
	all := (machineBusy() - m.total).Seconds() / el
	return server, bench, max(0, all-server-bench)
}

func selfCPU() time.Duration {
	u, _ := procstat.Read(os.Getpid())
	return u.CPU
}

// machineBusy is the CPU time processes used on all cores, from /proc/stat.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	// user, nice and system only: interrupt and softirq time (loopback
	// networking, much of it on behalf of our own sockets) is charged to
	// no process, and steal is the hypervisor's.
	var busy int64
	for _, v := range f[1:min(4, len(f))] {
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy * int64(time.Second) / procstat.ClockTick())
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
