package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// The network, all of it inside namespaces this run creates:
//
//	<pfx>-net   two bridges: pbr (the peer network 10.213.1.0/24) and
//	            cbr (the client network 10.213.2.0/24), one veth end per
//	            peer on each (p<i>p, p<i>c) and one for the client (cli)
//	<pfx>-p<i>  peer i (1..3 or 1..5): eth0 10.213.1.i on pbr, eth1
//	            10.213.2.i on cbr
//	<pfx>-cli   the harness's workload: eth0 10.213.2.100 on cbr
//
// Replication goes over the peer network only (the peers know each other
// by their 10.213.1.x URLs), so a fault there cuts peers apart while every
// client still reaches every peer.
//
// <pfx> is hnem<pid> of the outer harness: no two runs alive at once share
// it, so no two share a namespace. Every interface is created inside one of
// those namespaces (a veth is made in <pfx>-net with its other end placed
// straight into the peer's), never in the host's, so interface names need
// only be unique within a namespace. Every name, namespace or interface,
// fits Linux's 15 characters (IFNAMSIZ-1; checked by checkNames), a pid
// being at most 7 digits.
const (
	nsBase      = "hnem"
	peerNet     = "10.213.1."
	clientNet   = "10.213.2."
	clientAddr  = clientNet + "100"
	serverPort  = 8761
	nullLLAddr  = "02:00:00:00:00:01" // no interface has it: frames sent there are dropped
	stalePrefix = nsBase
	maxName     = 15 // IFNAMSIZ-1
	maxPID      = 4194304
)

type topology struct {
	prefix  string // hnem<pid>
	peers   int
	created []string // namespaces this topology made, in order
}

// interfaces is every interface name the topology creates, in any
// namespace.
func (t *topology) interfaces() []string {
	n := []string{"pbr", "cbr", "cli", "eth0", "eth1"}
	for i := 1; i <= t.peers; i++ {
		n = append(n, fmt.Sprintf("p%dp", i), fmt.Sprintf("p%dc", i))
	}
	return n
}

// checkNames says which name, if any, is longer than Linux allows.
func (t *topology) checkNames() error {
	for _, n := range append(t.names(), t.interfaces()...) {
		if len(n) > maxName {
			return fmt.Errorf("the name %q is %d characters; Linux allows %d", n, len(n), maxName)
		}
	}
	return nil
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
// is gone (a run killed with SIGKILL cannot clean up after itself). It runs
// before this run creates anything, so a namespace named for this process's
// own pid is a leftover of an earlier process that had the same pid.
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
		if pid != os.Getpid() && syscall.Kill(pid, 0) == nil {
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

// destroy removes the namespaces this topology created (their veths and
// bridges go with them), and reports any namespace of its prefix still
// there afterwards. It never touches a namespace it did not create.
func (t *topology) destroy() error {
	for _, ns := range slices.Backward(t.created) {
		killAndDelete(ns)
	}
	t.created = nil
	left, err := namespacesWithPrefix(t.prefix + "-")
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("namespaces left after removing them: %s", strings.Join(left, " "))
	}
	return nil
}

// namespacesWithPrefix lists the namespaces whose names begin with pfx.
func namespacesWithPrefix(pfx string) ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("ip netns list: %w", err)
	}
	var found []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], pfx) {
			found = append(found, f[0])
		}
	}
	return found, nil
}

func (t *topology) create() error {
	if err := t.checkNames(); err != nil {
		return err
	}
	for _, ns := range t.names() {
		if err := run("ip", "netns", "add", ns); err != nil {
			return err
		}
		t.created = append(t.created, ns)
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

// cutPairs cuts (or, with cut false, restores) every pair in pairs. A
// restore goes on past a failure, so that a heal after a partial cut
// undoes what was done; it returns the first error.
func (t *topology) cutPairs(pairs [][2]int, cut bool) error {
	var first error
	for _, pr := range pairs {
		if err := t.cutPair(pr[0], pr[1], cut); err != nil {
			if cut {
				return err
			}
			first = cmp.Or(first, err)
		}
	}
	return first
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
