package agent

import (
	"context"
	"fmt"
	"net"
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
