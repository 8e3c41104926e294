package caddymodule

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

func init() {
	caddy.RegisterModule(new(BoltStorage))
}

// BoltStorage keeps everything in one bbolt file on this machine, the
// default: nothing to run beside the gateway, one gateway process per file.
// The app's open_timeout, max_size, queue and durability settings apply.
type BoltStorage struct {
	// Path is the database file; placeholders are replaced. Default:
	// promptwall/promptwall.db under Caddy's data directory.
	Path string `json:"path,omitempty"`

	abs string
}

// CaddyModule returns the Caddy module information.
func (*BoltStorage) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "promptwall.storage.bolt", New: func() caddy.Module { return new(BoltStorage) }}
}

// Provision resolves the path.
func (b *BoltStorage) Provision(caddy.Context) error {
	if b.Path == "" {
		b.Path = defaultStoragePath()
	}
	b.Path = caddy.NewReplacer().ReplaceKnown(b.Path, "")
	abs, err := filepath.Abs(b.Path)
	if err != nil {
		return fmt.Errorf("storage path %q: %w", b.Path, err)
	}
	b.abs = abs
	return nil
}

// StorageKey is the file's absolute path: one open database per file.
func (b *BoltStorage) StorageKey() string { return "bolt\x00" + b.abs }

// OpenStore opens (creating) the file.
func (b *BoltStorage) OpenStore(_ context.Context, o StorageOptions) (store.Backend, error) {
	if err := os.MkdirAll(filepath.Dir(b.abs), 0o700); err != nil {
		return nil, fmt.Errorf("creating storage directory: %w", err)
	}
	st, err := store.Open(store.Options{
		Path:        b.abs,
		OpenTimeout: o.OpenTimeout,
		QueueSize:   o.QueueSize,
		EnqueueWait: o.EnqueueWait,
		Durability:  o.Durability,
		MaxSize:     o.MaxSize,
		Retention:   o.Retention,
		Observer:    o.Observer,
		Logger:      o.Logger,
	})
	if err != nil {
		return nil, err
	}
	o.Logger.Info("promptwall store opened", zap.String("engine", "bolt"), zap.String("path", b.abs))
	return st, nil
}

// UnmarshalCaddyfile reads the engine's block:
//
//	storage bolt {
//	    path <file>
//	}
func (b *BoltStorage) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseEngineBlock(d, "storage bolt", map[string]any{"path": &b.Path})
}

// Interface guards
var (
	_ caddy.Provisioner     = (*BoltStorage)(nil)
	_ caddyfile.Unmarshaler = (*BoltStorage)(nil)
	_ StorageEngine         = (*BoltStorage)(nil)
)
