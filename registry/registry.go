package registry

import (
	"context"

	"github.com/heureka-project/heureka"
)

// Registry is the lease table. (Implementation in progress.)
type Registry struct{ cfg Config }

// New returns a registry; it starts nothing.
func New(cfg Config) (*Registry, error) { return &Registry{cfg: cfg}, nil }

// Run evicts expired leases until ctx is done.
func (r *Registry) Run(ctx context.Context) error { <-ctx.Done(); return nil }

// Register adds or replaces an instance. in must be normalised.
func (r *Registry) Register(in *heureka.Instance, replication bool) error { return nil }

// Renew renews a lease.
func (r *Registry) Renew(req RenewRequest) (*heureka.Instance, error) { return nil, nil }

// Cancel removes an instance.
func (r *Registry) Cancel(app, id string, replication bool) error { return nil }

// SetStatus stores a status override.
func (r *Registry) SetStatus(app, id string, st heureka.Status, lastDirty int64, replication bool) error {
	return nil
}

// DeleteStatusOverride removes a status override.
func (r *Registry) DeleteStatusOverride(app, id string, value heureka.Status, lastDirty int64, replication bool) error {
	return nil
}

// UpdateMetadata merges md into an instance's metadata.
func (r *Registry) UpdateMetadata(app, id string, md map[string]string) error { return nil }

// Snapshot returns the current immutable view.
func (r *Registry) Snapshot() *Snapshot { return &Snapshot{} }

// Stats returns counters for metrics.
func (r *Registry) Stats() Stats { return Stats{} }

// Snapshot is an immutable view of the registry at one version.
type Snapshot struct{ Version uint64 }

func (s *Snapshot) Apps() *heureka.Applications                       { return nil }
func (s *Snapshot) App(name string) (*heureka.Application, bool)      { return nil, false }
func (s *Snapshot) Instance(app, id string) (*heureka.Instance, bool) { return nil, false }
func (s *Snapshot) InstanceByID(id string) (*heureka.Instance, bool)  { return nil, false }
func (s *Snapshot) VIP(vip string, secure bool) *heureka.Applications { return nil }
func (s *Snapshot) Delta() *heureka.Applications                      { return nil }
