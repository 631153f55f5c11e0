package client

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/heureka-project/heureka"
)

// OnHosts is ByHost for any Eureka server. A heureka server answers from
// its host index; one without it (a plain Eureka server, whose answer
// wraps ErrNotRegistered) is read whole, application app or every
// application when app is "", and its instances are matched here by the
// server's rule (heureka.HostKey of the host name or the IP address);
// scanned then says so. Errors are the calls'.
func (c *Client) OnHosts(ctx context.Context, hosts []string, app string) (found []*heureka.Instance, scanned bool, err error) {
	found, err = c.ByHost(ctx, hosts, app)
	if !errors.Is(err, ErrNotRegistered) {
		return found, false, err
	}
	var apps []*heureka.Application
	if app != "" {
		a, err := c.Application(ctx, strings.ToUpper(app))
		if err != nil {
			return nil, true, err
		}
		apps = []*heureka.Application{a}
	} else {
		all, err := c.Apps(ctx)
		if err != nil {
			return nil, true, err
		}
		apps = all.Apps
	}
	keys := make([]string, len(hosts))
	for i, h := range hosts {
		keys[i] = heureka.HostKey(h)
	}
	for _, a := range apps {
		for _, in := range a.Instances {
			if slices.Contains(keys, heureka.HostKey(in.HostName)) || slices.Contains(keys, heureka.HostKey(in.IPAddr)) {
				found = append(found, in)
			}
		}
	}
	return found, true, nil
}
