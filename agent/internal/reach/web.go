package reach

import (
	"context"
	"net/http"
	"strconv"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
)

// Report is what a knowledge package reads from a daemon: its role state
// and whether it is healthy by the package's rules.
type Report interface {
	RoleState() string
	Health() (ok bool, cause string)
}

// Web is a daemon read over HTTP from one base URL, what the roles that
// read a web endpoint (yarn, elasticsearch, zookeeper) share: one Client,
// reads in the agent's terms (Read), probes (Probe) and the web port
// registered beside the role's own figures (Figures).
type Web[T Report] struct {
	base     string
	httpPort int
	client   *http.Client
	read     func(ctx context.Context, c *http.Client, base string) (T, error)
}

// NewWeb returns the daemon at url (as Base checks it), read by read with
// its client and base URL.
func NewWeb[T Report](url string, read func(ctx context.Context, c *http.Client, base string) (T, error)) (*Web[T], error) {
	base, port, err := Base(url)
	if err != nil {
		return nil, err
	}
	return &Web[T]{base: base, httpPort: port, client: Client(), read: read}, nil
}

// URL is the daemon's base URL, for messages.
func (w *Web[T]) URL() string { return w.base }

// HTTPPort is the port in the daemon's URL, 0 when it names none.
func (w *Web[T]) HTTPPort() int { return w.httpPort }

// Read reads the daemon once, its error in the agent's terms (Read).
func (w *Web[T]) Read(ctx context.Context) (T, error) {
	return Read(ctx, func(ctx context.Context) (T, error) { return w.read(ctx, w.client, w.base) })
}

// Probe reads the daemon and says what its report means (Health).
func (w *Web[T]) Probe(ctx context.Context) (agent.Health, error) {
	v, err := w.Read(ctx)
	return Health(err, v.RoleState, v.Health)
}

// Figures are port as the Eureka port and the metadata kv, with the web
// port of the daemon's URL as heureka.MetaHTTPPort when it names one.
func (w *Web[T]) Figures(port int, kv ...string) agent.Figures {
	return Figures(port, w.httpPort, kv...)
}

// Figures are port as the Eureka port and the metadata kv, with httpPort,
// when above 0, as heureka.MetaHTTPPort.
func Figures(port, httpPort int, kv ...string) agent.Figures {
	if httpPort > 0 {
		kv = append(kv, heureka.MetaHTTPPort, strconv.Itoa(httpPort))
	}
	return agent.Figures{Port: port, Metadata: heureka.NewMetadata(kv...)}
}
