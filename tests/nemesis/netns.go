package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// The network, all of it inside namespaces this run creates:
//
//	<pfx>-net   two bridges: pbr (the peer network 10.213.1.0/24) and
//	            cbr (the client network 10.213.2.0/24), one veth end per
//	            peer on each (p<i>p, p<i>c) and one for the client (cli)
//	<pfx>-p<i>  peer i: eth0 10.213.1.i on pbr, eth1 10.213.2.i on cbr
//	<pfx>-cli   the harness's workload: eth0 10.213.2.100 on cbr
//
// Replication goes over the peer network only (the peers know each other
// by their 10.213.1.x URLs), so a fault there cuts peers apart while every
// client still reaches every peer.
const (
	nsBase      = "hnem"
	peerNet     = "10.213.1."
	clientNet   = "10.213.2."
	clientAddr  = clientNet + "100"
	serverPort  = 8761
	nullLLAddr  = "02:00:00:00:00:01" // no interface has it: frames sent there are dropped
	stalePrefix = nsBase
)

type topology struct {
	prefix string // hnem<pid>
	peers  int
}

func (t *topology) ns(name string) string { return t.prefix + "-" + name }
func (t *topology) peerNS(i int) string   { return t.ns(fmt.Sprintf("p%d", i)) }

func run(args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func ipn(ns string, args ...string) error { return run(append([]string{"ip", "-n", ns}, args...)...) }

// removeStale deletes the namespaces of earlier runs whose harness process
// is gone (a run killed with SIGKILL cannot clean up after itself).
func removeStale() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	re := regexp.MustCompile(`^` + stalePrefix + `(\d+)-\S+`)
	for _, line := range strings.Split(string(out), "\n") {
		m := re.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue // a run still going
		}
		name := strings.Fields(m[0])[0]
		fmt.Fprintf(os.Stderr, "nemesis: removing stale namespace %s\n", name)
		killAndDelete(name)
	}
}

// killAndDelete ends every process left in ns (SIGKILL) and removes it.
func killAndDelete(ns string) {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	_ = run("ip", "netns", "del", ns)
}

func (t *topology) names() []string {
	n := []string{t.ns("net"), t.ns("cli")}
	for i := 1; i <= t.peers; i++ {
		n = append(n, t.peerNS(i))
	}
	return n
}

func (t *topology) destroy() {
	for _, ns := range t.names() {
		killAndDelete(ns)
	}
}

func (t *topology) create() error {
	for _, ns := range t.names() {
		if err := run("ip", "netns", "add", ns); err != nil {
			return err
		}
		if err := ipn(ns, "link", "set", "lo", "up"); err != nil {
			return err
		}
	}
	net := t.ns("net")
	for _, br := range []string{"pbr", "cbr"} {
		if err := ipn(net, "link", "add", br, "type", "bridge"); err != nil {
			return err
		}
		if err := ipn(net, "link", "set", br, "up"); err != nil {
			return err
		}
	}
	// plug joins ns to bridge br through a veth named outer in net and
	// inner in ns, with addr/24 on the inner end.
	plug := func(ns, br, outer, inner, addr string) error {
		steps := [][]string{
			{net, "link", "add", outer, "type", "veth", "peer", "name", inner, "netns", ns},
			{net, "link", "set", outer, "master", br},
			{net, "link", "set", outer, "up"},
			{ns, "addr", "add", addr + "/24", "dev", inner},
			{ns, "link", "set", inner, "up"},
		}
		for _, s := range steps {
			if err := ipn(s[0], s[1:]...); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 1; i <= t.peers; i++ {
		ns := t.peerNS(i)
		if err := plug(ns, "pbr", fmt.Sprintf("p%dp", i), "eth0", peerNet+strconv.Itoa(i)); err != nil {
			return err
		}
		if err := plug(ns, "cbr", fmt.Sprintf("p%dc", i), "eth1", clientNet+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	return plug(t.ns("cli"), "cbr", "cli", "eth0", clientAddr)
}

// Faults on the peer network. Each is undone by its heal.

// cutPeer takes peer i's port on the peer bridge down: its packets to the
// other peers, and theirs to it, are lost (no carrier; no error at once).
func (t *topology) cutPeer(i int, down bool) error {
	state := "up"
	if down {
		state = "down"
	}
	return ipn(t.ns("net"), "link", "set", fmt.Sprintf("p%dp", i), state)
}

// cutPair makes peers i and j lose each other's packets while both keep
// the rest of the peer network: each resolves the other's address to a
// link-layer address no interface has, so the bridge floods the frames
// and every port drops them. (This kernel has no netfilter tools and no
// tc actions; a neighbour entry is the per-pair drop iproute2 can do.)
func (t *topology) cutPair(i, j int, cut bool) error {
	for _, p := range [][2]int{{i, j}, {j, i}} {
		ns, other := t.peerNS(p[0]), peerNet+strconv.Itoa(p[1])
		var err error
		if cut {
			err = ipn(ns, "neigh", "replace", other, "lladdr", nullLLAddr, "dev", "eth0", "nud", "permanent")
		} else {
			err = ipn(ns, "neigh", "del", other, "dev", "eth0")
		}
		if err != nil {
			return err
		}
	}
	return nil
}
