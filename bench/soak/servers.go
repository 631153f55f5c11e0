package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka/bench/internal/procstat"
	"github.com/heureka-project/heureka/internal/proc"
)

// peer is one `heureka server` process, kept at one address over restarts.
type peer struct {
	addr string // 127.0.0.1:PORT
	args []string
	log  string // its log file, appended to by each process
	proc *proc.Proc
	// cpu of processes of this peer that have exited (restarts), seconds.
	pastCPU float64
}

func (p *peer) base() string { return "http://" + p.addr + "/eureka" }

// workDir makes a temporary directory for one run's files and logs, named
// for the run, and builds heureka into it unless o.bin names a binary. The
// caller removes dir, or keeps it for its logs.
func workDir(ctx context.Context, o options, run string) (dir, bin string, err error) {
	dir, err = os.MkdirTemp("", "heureka-"+run+"-")
	if err != nil {
		return "", "", err
	}
	bin, err = buildHeureka(ctx, o.bin, o.repo, dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, bin, nil
}

// buildHeureka builds repo/cmd/heureka into dir, unless bin is given.
func buildHeureka(ctx context.Context, bin, repo, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	return proc.Build(ctx, repo, dir)
}

// startPeers starts n servers on fresh loopback ports, each listing the
// others as peers, pinned to cpus when set.
func startPeers(ctx context.Context, bin, dir, cpus string, n int, extra []string) ([]*peer, error) {
	peers := make([]*peer, n)
	var urls []string
	for i := range peers {
		addr, err := proc.FreeAddr("127.0.0.1")
		if err != nil {
			return nil, err
		}
		peers[i] = &peer{addr: addr, log: filepath.Join(dir, fmt.Sprintf("peer%d.log", i+1))}
		urls = append(urls, peers[i].base())
	}
	for _, p := range peers {
		p.args = []string{"server", "--listen", p.addr, "--log-level", "warn"}
		if n > 1 {
			p.args = append(p.args, "--peers", strings.Join(urls, ","))
		}
		p.args = append(p.args, extra...)
		if err := p.start(ctx, bin, cpus); err != nil {
			stopPeers(peers)
			return nil, err
		}
	}
	return peers, nil
}

// start runs a new process for p and waits up to a minute for its /readyz.
func (p *peer) start(ctx context.Context, bin, cpus string) error {
	argv := proc.Taskset(cpus, append([]string{bin}, p.args...)...)
	pr, err := proc.StartLogged("heureka server "+p.addr, proc.Command(argv), p.log, nil)
	if err != nil {
		return err
	}
	p.proc = pr
	return pr.WaitReady(ctx, time.Minute, proc.HTTPOK("http://"+p.addr+"/readyz"))
}

// stop ends the process with SIGTERM (SIGKILL after 15 s) and adds its CPU
// time to pastCPU.
func (p *peer) stop() {
	if p.proc == nil {
		return
	}
	cpu, _ := p.cpu()
	p.proc.Stop(15 * time.Second)
	p.pastCPU += cpu
	p.proc = nil
}

func stopPeers(peers []*peer) {
	for _, p := range peers {
		if p != nil {
			p.stop()
		}
	}
}

// pid is the heureka process itself, under taskset (which execs it, so the
// PIDs are the same).
func (p *peer) pid() int { return p.proc.Pid() }

// cpu returns the live process's user+system CPU time in seconds.
func (p *peer) cpu() (float64, error) {
	u, err := procstat.Read(p.pid())
	return u.CPU.Seconds(), err
}

// totalCPU is the CPU of this peer's processes, past and present.
func (p *peer) totalCPU() float64 {
	c, _ := p.cpu()
	return p.pastCPU + c
}

// rss returns the live process's resident set in bytes.
func (p *peer) rss() int64 {
	u, _ := procstat.Read(p.pid())
	return u.RSS
}

// metric reads one unlabelled counter or gauge from /metrics; -1 when the
// peer does not answer or has no such series.
func (p *peer) metric(name string) float64 {
	x := -1.0
	p.scrape(func(series string, v float64) {
		if series == name {
			x = v
		}
	})
	return x
}

// metricSum adds up every series of one metric family from /metrics; -1
// when the peer does not answer.
func (p *peer) metricSum(name string) float64 {
	sum := 0.0
	if err := p.scrape(func(series string, v float64) {
		if series == name || strings.HasPrefix(series, name+"{") {
			sum += v
		}
	}); err != nil {
		return -1
	}
	return sum
}

// scrape calls fn with each sample line of /metrics: the series (name and
// labels) and its value.
func (p *peer) scrape(fn func(series string, v float64)) error {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		fn(line[:i], v)
	}
	return sc.Err()
}
