package agent

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"time"
)

// resolveTimeout bounds HostIP's lookup: a resolver that has not answered
// in five seconds will not, and the agent should start or say why.
const resolveTimeout = 5 * time.Second

// HostIP returns the address to register for host: host itself when it is
// an IP address, else the one of its addresses that clients elsewhere can
// reach most likely, IPv4 before IPv6 and anything before loopback (a host
// name that resolves to 127.0.1.1 as well as to its real address, as
// Debian's /etc/hosts has it, registers the real one).
func HostIP(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return "", fmt.Errorf("cannot resolve host %q: %v", host, err)
	}
	rank := func(a net.IPAddr) int {
		r := 0
		if a.IP.IsLoopback() {
			r += 2
		}
		if a.IP.To4() == nil {
			r++
		}
		return r
	}
	best := slices.MinFunc(addrs, func(a, b net.IPAddr) int { return rank(a) - rank(b) })
	return best.IP.String(), nil
}

// Identify fills in what cfg registers the node as, where it is empty:
// Host with this machine's host name, IPAddr with HostIP's address for
// Host, and Rack from the Hadoop topology table or script when one is
// given (FindRack, asked by IP address, then host name). Give at most one
// of cfg.Rack, table and script.
func Identify(ctx context.Context, cfg *Config, table, script string) error {
	if countSet(cfg.Rack != "", table != "", script != "") > 1 {
		return fmt.Errorf("rack %q, topology table %q and topology script %q: give at most one", cfg.Rack, table, script)
	}
	var err error
	if cfg.Host == "" {
		if cfg.Host, err = os.Hostname(); err != nil {
			return fmt.Errorf("cannot read this machine's host name: %w", err)
		}
	}
	if cfg.IPAddr == "" {
		if cfg.IPAddr, err = HostIP(ctx, cfg.Host); err != nil {
			return err
		}
	}
	cfg.Rack, err = FindRack(ctx, cfg.Rack, table, script, cfg.IPAddr, cfg.Host)
	return err
}
