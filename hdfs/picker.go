package hdfs

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
)

// Picker is what a client holds to choose DataNodes and NameNodes: the
// registry says who exists (Nodes, usually a discovery cache), the Picker
// confirms who is alive. It probes chosen DataNodes before handing them
// out, if asked, and keeps a local penalty list: a node that just failed a
// probe or a write (reported with Report) is avoided for a while, even
// before the registry knows. It is safe for concurrent use.
type Picker struct {
	// DataNodes and NameNodes return the registered instances, e.g.
	// cache.Instances(AppName(RoleDataNode, cluster)).
	DataNodes func() []*heureka.Instance
	NameNodes func() []*heureka.Instance
	// Penalties is the local penalty list; nil makes one with
	// DefaultPenalty.
	Penalties *Penalties
	// Probe, if set, checks each chosen DataNode before it is handed out;
	// DialProbe is the usual one. A node that fails is penalised and
	// replaced.
	Probe func(ctx context.Context, in *heureka.Instance) error
	// OnConflict is told when more than one NameNode claims to be active.
	OnConflict func(Resolution)
	// Chooser, if set, makes the choice instead of ChooseDataNodes over
	// DataNodes: a registry that chooses server-side (heureka's
	// /v1/hdfs/pick), so the client never holds the whole DataNode list.
	// It is given the request with the penalised nodes filled in.
	Chooser func(ctx context.Context, req PlacementRequest) (Placement, error)

	once sync.Once
}

// DefaultPenalty is how long a node that failed stays avoided: long enough
// for the agent's probe (1 s) and the registry to catch up, short enough
// that a transient failure costs little.
const DefaultPenalty = 30 * time.Second

// maxProbeRounds bounds how often Choose replaces nodes that failed a probe.
const maxProbeRounds = 3

func (p *Picker) init() {
	p.once.Do(func() {
		if p.Penalties == nil {
			p.Penalties = NewPenalties(DefaultPenalty, nil)
		}
	})
}

// Choose picks DataNodes for a write (see ChooseDataNodes), leaving out the
// penalised ones; with a Probe, nodes that do not answer are penalised and
// replaced, for a few rounds. The error says how many are missing and why.
func (p *Picker) Choose(ctx context.Context, req PlacementRequest) (Placement, error) {
	p.init()
	choose := p.Chooser
	if choose == nil {
		nodes := p.DataNodes()
		choose = func(_ context.Context, req PlacementRequest) (Placement, error) { return ChooseDataNodes(nodes, req) }
	}
	for round := 0; ; round++ {
		req.Penalized = p.Penalties.Active(p.Penalties.clock())
		pl, err := choose(ctx, req)
		if p.Probe == nil || len(pl.Nodes) == 0 {
			return pl, err
		}
		failed := p.probeAll(ctx, pl.Nodes)
		if len(failed) == 0 {
			return pl, err
		}
		if round+1 == maxProbeRounds || ctx.Err() != nil {
			return Placement{Requested: pl.Requested, Short: pl.Requested},
				heureka.Errorf(heureka.EUNAVAILABLE, "no live DataNodes after %d rounds of probes: %d of the chosen nodes did not answer (last: %s)",
					maxProbeRounds, len(failed), failed[0])
		}
	}
}

// probeAll probes nodes concurrently, penalises those that fail and
// returns what went wrong with each.
func (p *Picker) probeAll(ctx context.Context, nodes []*heureka.Instance) []string {
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for _, in := range nodes {
		wg.Go(func() {
			if err := p.Probe(ctx, in); err != nil {
				cause := "probe failed: " + err.Error()
				p.Penalties.Penalize(in.ID, cause)
				mu.Lock()
				failed = append(failed, in.ID+": "+cause)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}

// Report tells the Picker that a node failed the caller (a write that
// broke off, a connection refused): it is avoided for the penalty period.
func (p *Picker) Report(id string, err error) {
	p.init()
	cause := "reported by the caller"
	if err != nil {
		cause += ": " + err.Error()
	}
	p.Penalties.Penalize(id, cause)
}

// ResolveNameNodes resolves the active NameNode from the registered ones
// (see the package function); a conflict between two claimed actives is
// passed to OnConflict as well as returned.
func (p *Picker) ResolveNameNodes() (Resolution, error) {
	res, err := ResolveNameNodes(p.NameNodes())
	if res.Conflict != "" && p.OnConflict != nil {
		p.OnConflict(res)
	}
	return res, err
}

// DialProbe returns a Probe that opens a TCP connection to a DataNode's
// data port (metadata data_port, else the instance's port) within timeout.
func DialProbe(timeout time.Duration) func(context.Context, *heureka.Instance) error {
	d := net.Dialer{Timeout: timeout}
	return func(ctx context.Context, in *heureka.Instance) error {
		addr, err := DataNodeAddress(in)
		if err != nil {
			return err
		}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// DataNodeAddress is host:port of a DataNode's data-transfer port: the
// data_port metadata when present, else the Eureka port.
func DataNodeAddress(in *heureka.Instance) (string, error) {
	host := in.IPAddr
	if host == "" {
		host = in.HostName
	}
	port := in.Port.Number
	if v, ok := in.Metadata.Lookup(MetaDataPort); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 65535 {
			return "", fmt.Errorf("DataNode %s: data_port %q is not a port", in.ID, v)
		}
		port = n
	}
	if host == "" || port == 0 {
		return "", fmt.Errorf("DataNode %s has no address to probe", in.ID)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}
