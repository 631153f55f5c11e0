package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Replication goes through a TCP fault proxy (toxiproxy, as a library): a
// process in each peer's namespace listens on 127.0.0.1:900j for each
// other peer j and forwards to 10.213.1.j over the peer network, so a
// partition still cuts it. Its API listens on the client network, where
// the nemesis adds and removes toxics: latency and a narrow bandwidth for a
// slow link, and connections reset for a flaky one.
const (
	proxyBase = 9000
	apiPort   = 8474
)

func proxyListen(j int) string { return "127.0.0.1:" + strconv.Itoa(proxyBase+j) }
func proxyName(j int) string   { return fmt.Sprintf("to-p%d", j) }
func proxyAPI(i int) string    { return fmt.Sprintf("http://%s%d:%d", clientNet, i, apiPort) }

// peerURLVia is how peer i reaches peer j: through its own proxy.
func peerURLVia(j int) string { return "http://" + proxyListen(j) + "/eureka" }

// runProxy is the -proxy mode: the fault proxy of peer i, in its namespace,
// until killed.
func runProxy(i, peers int) int {
	// toxiproxy (v2.5.0) dials the upstream inside its accept loop, with no
	// timeout: one dial begun during a cut holds every later connection
	// through that link until a SYN retransmission gets through after the
	// heal, 8 s or 16 s later by Linux's back-off (seen in seed 3905: a
	// sender reached the peer again 7.5 s after the heal). A real sender
	// dials afresh at each attempt. One SYN retry in this namespace (it
	// holds only this proxy and its peer) bounds such a dial to about 3 s.
	if err := os.WriteFile("/proc/sys/net/ipv4/tcp_syn_retries", []byte("1"), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "nemesis proxy p%d: bounding its dials (tcp_syn_retries): %v\n", i, err)
		return 2
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for j := 1; j <= peers; j++ {
		if j == i {
			continue
		}
		p := toxiproxy.NewProxy(srv, proxyName(j), proxyListen(j), fmt.Sprintf("%s%d:%d", peerNet, j, serverPort))
		if err := srv.Collection.Add(p, true); err != nil {
			fmt.Fprintf(os.Stderr, "nemesis proxy p%d: %v\n", i, err)
			return 2
		}
	}
	srv.Listen(fmt.Sprintf("%s%d", clientNet, i), strconv.Itoa(apiPort)) // blocks
	return 2
}

// startProxy runs peer i's fault proxy in its namespace, with a link to
// each of the other peers.
func startProxy(ns string, i, peers int, dir string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, fmt.Sprintf("proxy-p%d.log", i)))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("ip", "netns", "exec", ns, self, "-proxy", strconv.Itoa(i), "-peers", strconv.Itoa(peers))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	go func() { _ = cmd.Wait(); log.Close() }()
	// Ready when its API answers.
	c := toxiclient.NewClient(proxyAPI(i))
	for start := time.Now(); ; {
		if _, err := c.Proxies(); err == nil {
			return cmd, nil
		} else if time.Since(start) > 15*time.Second {
			return cmd, fmt.Errorf("the fault proxy of p%d did not answer: %w", i, err)
		}
		time.Sleep(100 * time.Millisecond) // polling a condition, bounded above
	}
}

// toxics adds (or, with add false, removes) a kind of toxic on every link
// out of peer i.
func toxics(i, peers int, kind string, add bool) error {
	c := toxiclient.NewClient(proxyAPI(i))
	for j := 1; j <= peers; j++ {
		if j == i {
			continue
		}
		p, err := c.Proxy(proxyName(j))
		if err != nil {
			return fmt.Errorf("proxy p%d→p%d: %w", i, j, err)
		}
		type toxic struct {
			name, typ, stream string
			toxicity          float32
			attrs             toxiclient.Attributes
		}
		var list []toxic
		switch kind {
		case "slow":
			list = []toxic{
				{"slow-up", "latency", "upstream", 1, toxiclient.Attributes{"latency": 1500, "jitter": 700}},
				{"slow-down", "latency", "downstream", 1, toxiclient.Attributes{"latency": 1500, "jitter": 700}},
				{"narrow", "bandwidth", "downstream", 1, toxiclient.Attributes{"rate": 8}}, // KB/s
			}
		case "flaky":
			list = []toxic{
				{"reset", "reset_peer", "upstream", 0.5, toxiclient.Attributes{"timeout": 300}},
				{"stall", "timeout", "downstream", 0.3, toxiclient.Attributes{"timeout": 2000}},
			}
		}
		for _, t := range list {
			if add {
				_, err = p.AddToxic(t.name, t.typ, t.stream, t.toxicity, t.attrs)
			} else {
				err = p.RemoveToxic(t.name)
			}
			if err != nil && (add || !strings.Contains(err.Error(), "not found")) {
				return fmt.Errorf("toxic %s on p%d→p%d: %w", t.name, i, j, err)
			}
		}
	}
	return nil
}
