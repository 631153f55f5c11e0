package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/bench/internal/procstat"
)

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
