package caddymodule

import (
	"errors"
	"fmt"

	"github.com/promptwall/promptwall/store"
)

// errNotRunning is the error of work that needs a running config while
// none has started (or the last one stopped).
var errNotRunning = errors.New("no promptwall configuration is running")

// Caddy provisions a new config while the old one still serves, and keeps
// the old one when anything fails. Provision therefore only prepares: what
// is shared with the running config through the usage pool (provider
// limits, the config campaign runs use, the store's durability, declared
// organizations and users, the caps on external scanner calls, provider
// versions and declared campaigns in the store) changes in Start, once
// every app of the new config has provisioned. When a later app fails to
// start, Caddy stops the apps it started: Stop then gives the shared state
// back to the config that keeps running. Declarations are never deleted,
// so organizations and users only the stopped config declared remain.

// Start makes this config the one that runs.
func (a *App) Start() error {
	s := a.shared
	s.activeMu.Lock()
	defer s.activeMu.Unlock()
	if prev := s.current.Load(); prev != nil && prev != a && !prev.stopped {
		a.previous = prev
	}
	if err := a.activate(); err != nil {
		// The old config keeps running: give it back its limits.
		if a.previous != nil {
			_ = a.previous.activate()
		}
		return err
	}
	return nil
}

// Stop rolls the shared state back to the previous config when this one
// is stopped while that one still runs (Caddy could not start the rest of
// this config). Shared state is released in Cleanup, after the next config
// (if any) has taken its reference.
func (a *App) Stop() error {
	s := a.shared
	if s == nil {
		return nil
	}
	s.activeMu.Lock()
	defer s.activeMu.Unlock()
	a.stopped = true
	if s.current.Load() != a {
		return nil
	}
	if prev := a.previous; prev != nil && !prev.stopped {
		if err := prev.activate(); err != nil {
			return fmt.Errorf("restoring the running configuration's limits: %w", err)
		}
		return nil
	}
	s.current.Store(nil)
	return nil
}

// activate applies this config's shared state. Limits come first: they
// cannot fail, and they matter most to live traffic.
func (a *App) activate() error {
	for _, p := range a.providers {
		p.limiter.SetConfig(p.limits)
	}
	a.shared.current.Store(a)
	if a.shared.store == nil {
		return nil
	}
	if d, ok := a.shared.engine.(durabilitySetter); ok {
		if err := d.SetDurability(a.durability); err != nil {
			return err
		}
	}
	// Declared organizations come before providers: a provider's orgs
	// list names them.
	if err := a.applyIdentity(); err != nil {
		return err
	}
	if err := a.syncProviderVersions(); err != nil {
		return err
	}
	for _, c := range a.campaigns {
		if err := a.shared.store.PutCampaign(c); err != nil {
			return fmt.Errorf("campaign %q: %w", c.Name, err)
		}
	}
	return nil
}

// durabilitySetter is a store whose durability setting a config reload
// changes in place (both engines); a store without it keeps the setting
// it was opened with.
type durabilitySetter interface {
	SetDurability(store.Durability) error
}
