package limits

import (
	"context"
	"time"
)

// Gate admits requests to one provider. *Limiter keeps its state in this
// process (the default); a Gate of a RedisSet keeps it in Redis, shared by
// every gateway instance using the same Redis and key prefix.
type Gate interface {
	// Name returns the provider name the gate was made for.
	Name() string
	// Config returns the limits in force.
	Config() Config
	// SetConfig changes the limits in place, keeping the state (a
	// bucket's level, the slots held).
	SetConfig(cfg Config)
	// Acquire admits one request, as Limiter.Acquire documents: it waits
	// up to maxWait, and the release it returns must run once the answer
	// has been written completely and is safe to call twice.
	Acquire(ctx context.Context, maxWait time.Duration) (release func(), err error)
}

// Set keeps one Gate per provider name across config reloads.
type Set interface {
	// Get returns the named provider's gate, creating it on first use and
	// otherwise updating its limits in place to cfg.
	Get(name string, cfg Config) Gate
	// Attach returns the named provider's gate without changing the
	// limits of one that exists; a new one starts with cfg. A config
	// being provisioned attaches, and applies its limits with SetConfig
	// only once it is certain to run.
	Attach(name string, cfg Config) Gate
	// Lookup returns the named provider's gate without changing it.
	Lookup(name string) (Gate, bool)
	// Retain forgets the gates of providers not in keep and returns how
	// many it forgot.
	Retain(keep []string) int
}

// Local returns r as a Set: the in-process limiters.
func Local(r *Registry) Set { return localSet{r} }

type localSet struct{ r *Registry }

func (s localSet) Get(name string, cfg Config) Gate    { return s.r.Get(name, cfg) }
func (s localSet) Attach(name string, cfg Config) Gate { return s.r.Attach(name, cfg) }
func (s localSet) Retain(keep []string) int            { return s.r.Retain(keep) }
func (s localSet) Lookup(name string) (Gate, bool) {
	l, ok := s.r.Lookup(name)
	if !ok {
		return nil, false
	}
	return l, true
}

var (
	_ Gate = (*Limiter)(nil)
	_ Set  = localSet{}
)
