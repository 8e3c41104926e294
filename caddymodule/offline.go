package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/scanner"
)

// OfflineScreener screens texts with the endpoints of a promptwall app
// config without opening the store, so the scan command works next to a
// running gateway that holds the database.
type OfflineScreener struct {
	app    *App
	cancel context.CancelFunc
}

// NewOfflineScreener compiles the endpoints of appJSON (the config's
// apps.promptwall; empty for the built-in default endpoint).
func NewOfflineScreener(appJSON json.RawMessage) (*OfflineScreener, error) {
	app, err := decodeApp(appJSON)
	if err != nil {
		return nil, err
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := app.provisionScreening(ctx); err != nil {
		if app.shared != nil {
			app.shared.closeCaches()
		}
		cancel()
		return nil, err
	}
	return &OfflineScreener{app: app, cancel: cancel}, nil
}

// Pipeline returns the compiled scanners of the named endpoint.
func (s *OfflineScreener) Pipeline(endpoint string) (*scanner.Pipeline, error) {
	ep, err := s.app.endpoint(endpoint)
	if err != nil {
		return nil, err
	}
	return ep.pipeline, nil
}

// Close releases the caches.
func (s *OfflineScreener) Close() {
	s.app.shared.closeCaches()
	s.cancel()
}

// provisionScreening compiles the endpoints without opening the store.
func (a *App) provisionScreening(ctx caddy.Context) error {
	a.logger = zap.NewNop()
	a.metrics = getMetrics()
	shared, err := newCaches(64 << 20)
	if err != nil {
		return err
	}
	a.shared = shared
	return a.compileEndpoints(ctx)
}

// StoragePath is the bbolt database path of appJSON (the config's
// apps.promptwall, or empty): its storage, else the default path, with
// placeholders replaced. A config whose storage is another engine is an
// error: operator commands open bbolt files only.
func StoragePath(appJSON json.RawMessage) (string, error) {
	app, err := decodeApp(appJSON)
	if err != nil {
		return "", err
	}
	bolt := new(BoltStorage)
	switch raw := app.StorageRaw; {
	case len(raw) == 0:
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &bolt.Path); err != nil {
			return "", fmt.Errorf("storage: %w", err)
		}
	default:
		var mod struct {
			Engine string `json:"engine"`
		}
		if err := json.Unmarshal(raw, &mod); err != nil {
			return "", fmt.Errorf("storage: %w", err)
		}
		if mod.Engine != "bolt" {
			return "", fmt.Errorf("the config keeps its data in storage %q: this command opens bbolt files only; "+
				"use the running gateway's /backend/v1 API instead", mod.Engine)
		}
		if err := json.Unmarshal(raw, bolt); err != nil {
			return "", fmt.Errorf("storage bolt: %w", err)
		}
	}
	if bolt.Path == "" {
		bolt.Path = defaultStoragePath()
	}
	return caddy.NewReplacer().ReplaceKnown(bolt.Path, ""), nil
}

func decodeApp(appJSON json.RawMessage) (*App, error) {
	app := new(App)
	if len(appJSON) == 0 {
		return app, nil
	}
	if err := json.Unmarshal(appJSON, app); err != nil {
		return nil, fmt.Errorf("reading promptwall app config: %w", err)
	}
	return app, nil
}
