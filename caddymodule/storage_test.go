package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/store"
)

const testCursorKey = "0123456789abcdef0123456789abcdef"

// Every mistake in a storage config is refused at provisioning with an
// error that says what to fix, and never quotes the DSN (it may hold a
// password).
func TestStorageProvisionErrors(t *testing.T) {
	t.Setenv(CursorKeyEnv, "")
	tests := []struct {
		name    string
		storage string
		maxSize int64
		wantErr string
	}{
		{name: "no dsn", storage: `{"engine":"postgres","cursor_key":"` + testCursorKey + `"}`, wantErr: "dsn is required"},
		{name: "dsn from an unset variable", storage: `{"engine":"postgres","dsn":"{env.PW_TEST_UNSET_DSN}","cursor_key":"` + testCursorKey + `"}`, wantErr: "dsn is required"},
		{name: "bad dsn", storage: `{"engine":"postgres","dsn":"postgres://secretuser:hunter2@[::1","cursor_key":"` + testCursorKey + `"}`, wantErr: "not a valid PostgreSQL connection string"},
		{name: "no cursor key", storage: `{"engine":"postgres","dsn":"postgres://127.0.0.1/pw"}`, wantErr: "cursor_key must be at least 32 bytes"},
		{name: "short cursor key", storage: `{"engine":"postgres","dsn":"postgres://127.0.0.1/pw","cursor_key":"short"}`, wantErr: "it has 5"},
		{name: "max_size on postgres", storage: `{"engine":"postgres","dsn":"postgres://127.0.0.1/pw","cursor_key":"` + testCursorKey + `"}`, maxSize: 1 << 30, wantErr: "max_size bounds a bbolt file"},
		{name: "unknown engine", storage: `{"engine":"mysql"}`, wantErr: "promptwall.storage.mysql"},
		{name: "bolt path not a string", storage: `42`, wantErr: "storage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			a := &App{StorageRaw: json.RawMessage(tc.storage), MaxSize: tc.maxSize}
			err := a.provisionStorage(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error quotes the DSN's password: %v", err)
			}
		})
	}
}

// The forms of storage that name a bbolt file share one open database per
// file, whichever form names it.
func TestStorageBoltForms(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pw.db")
	quoted, _ := json.Marshal(path)
	module, _ := json.Marshal(map[string]string{"engine": "bolt", "path": path})
	var keys []string
	for _, raw := range []json.RawMessage{quoted, module} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		a := &App{StorageRaw: raw}
		if err := a.provisionStorage(ctx); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		cancel()
		keys = append(keys, a.storage.StorageKey())
	}
	if keys[0] != keys[1] {
		t.Fatalf("a path and storage bolt with the same path open different stores: %q %q", keys[0], keys[1])
	}
	got, err := StoragePath(json.RawMessage(`{"storage":` + string(module) + `}`))
	if err != nil || got != path {
		t.Fatalf("StoragePath of storage bolt = %q, %v", got, err)
	}
	if _, err := StoragePath(json.RawMessage(`{"storage":{"engine":"postgres","dsn":"x"}}`)); err == nil || !strings.Contains(err.Error(), "not in a bbolt file") {
		t.Fatalf("StoragePath of storage postgres: %v", err)
	}
}

// An unreachable server is told apart from a failure of the request
// itself: the first is answered 503 (retry), the second 500.
func TestPostgresUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "connection refused", err: fmt.Errorf("store: get org: %w", refused), want: true},
		{name: "connection lost mid-call", err: fmt.Errorf("store: list: %w", io.ErrUnexpectedEOF), want: true},
		{name: "administrator shutdown", err: &pgconn.PgError{Code: "57P01"}, want: true},
		{name: "server starting up", err: &pgconn.PgError{Code: "57P03"}, want: true},
		{name: "connection exception class", err: &pgconn.PgError{Code: "08006"}, want: true},
		{name: "too many connections", err: &pgconn.PgError{Code: "53300"}, want: true},
		{name: "unique violation", err: &pgconn.PgError{Code: "23505"}, want: false},
		{name: "syntax error", err: &pgconn.PgError{Code: "42601"}, want: false},
		{name: "not found", err: store.ErrNotFound, want: false},
		{name: "other", err: errors.New("cursor signature mismatch"), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pgUnavailable(tc.err); got != tc.want {
				t.Fatalf("pgUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// The gateway refuses requests at once while the writer reports the
// server unreachable, and admits them again after its next successful
// commit.
func TestStoreHealth(t *testing.T) {
	h := newStoreHealth(new(PostgresStorage))
	g := &guardedStore{health: h, ops: getStoreOpMetrics()}
	steps := []struct {
		commit   error
		wantDown bool
	}{
		{commit: nil, wantDown: false},
		{commit: &pgconn.PgError{Code: "23505"}, wantDown: false},
		{commit: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, wantDown: true},
		{commit: &pgconn.PgError{Code: "23505"}, wantDown: true},
		{commit: nil, wantDown: false},
	}
	for i, st := range steps {
		h.committed(st.commit)
		if h.down.Load() != st.wantDown {
			t.Fatalf("step %d (%v): down = %v", i, st.commit, h.down.Load())
		}
		if st.wantDown {
			if _, err := g.Reserve(context.Background()); !errors.Is(err, errStoreUnavailable) {
				t.Fatalf("step %d: Reserve while down: %v", i, err)
			}
		}
	}
}

// With a real server: the app opens PostgreSQL from the config, and a
// config that names an unreachable server fails within open_timeout with
// an error naming the engine.
func TestStoragePostgresOpen(t *testing.T) {
	dsn := testsvc.PostgresDSN(t)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	p := &PostgresStorage{DSN: dsn, CursorKey: testCursorKey}
	if err := p.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	st, err := p.OpenStore(ctx, StorageOptions{OpenTimeout: 10 * time.Second, Logger: ctx.Logger(), Observer: storeObserver{m: getMetrics()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(store.Locker); !ok {
		t.Error("the PostgreSQL backend offers no Locker: schedules would fire on every instance")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	dead := &PostgresStorage{DSN: "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", CursorKey: testCursorKey}
	if err := dead.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = dead.OpenStore(ctx, StorageOptions{OpenTimeout: 3 * time.Second, Logger: ctx.Logger()})
	if err == nil || !strings.Contains(err.Error(), "storage postgres") || !dead.Unavailable(err) {
		t.Fatalf("opening an unreachable server: %v (unavailable: %v)", err, dead.Unavailable(err))
	}
}

// A reload that changes durability changes it on the open store: the
// gateway's outage guard wraps the store but must not hide its settings.
func TestActivateSetsDurability(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	path, _ := json.Marshal(filepath.Join(t.TempDir(), "pw.db"))
	a := &App{StorageRaw: path, VerdictCacheBytes: 1 << 20, durability: store.DurabilitySync}
	shared := openAppStore(t, ctx, a)
	defer shared.Destruct()
	// Provision creates the default organization, which activation reads.
	if err := a.bootstrap(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []store.Durability{store.DurabilityBatched, store.DurabilitySync} {
		a.durability = d
		if err := a.activate(); err != nil {
			t.Fatal(err)
		}
		if got := shared.engine.(*store.Store).Durability(); got != d {
			t.Fatalf("after activating durability %s the store has %s", d, got)
		}
	}
}

// openAppStore provisions a's storage and opens its shared state (the store
// and what lives beside it), as the app's Provision does.
func openAppStore(t *testing.T, ctx caddy.Context, a *App) *sharedState {
	t.Helper()
	a.logger, a.metrics = ctx.Logger(), getMetrics()
	if err := a.provisionStorage(ctx); err != nil {
		t.Fatal(err)
	}
	shared, err := a.openShared(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.shared = shared
	return shared
}

// retention with a negative value keeps records forever: an old record
// survives the sweep a store runs when it opens.
func TestNegativeRetentionKeepsRecords(t *testing.T) {
	path, _ := json.Marshal(filepath.Join(t.TempDir(), "pw.db"))
	old := store.Timestamp(time.Now().AddDate(-1, 0, 0))
	for i, retention := range []time.Duration{-1, -1, 24 * time.Hour} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		a := &App{StorageRaw: path, VerdictCacheBytes: 1 << 20, Retention: caddy.Duration(retention), durability: store.DurabilitySync}
		shared := openAppStore(t, ctx, a)
		if i == 0 {
			if err := shared.store.Put(ctx, &store.Prompt{PromptFields: store.PromptFields{ID: "old-record", OrgID: "o1", Type: "prompt", ReceivedAt: old}}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := shared.store.GetPrompt("old-record")
		if retention < 0 && err != nil {
			t.Fatalf("open %d, retention %s: a year-old record is gone: %v", i, retention, err)
		}
		if retention > 0 && !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("retention %s kept a year-old record: %v", retention, err)
		}
		if err := shared.Destruct(); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
}

// The gateway's refusals when the store fails: an unreachable server is
// 503 store_unavailable (retry), a full queue 503 store_full, anything
// else 500.
func TestStoreRefusals(t *testing.T) {
	a := &App{shared: &sharedState{health: newStoreHealth(new(PostgresStorage))}}
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name       string
		refuse     func(error) *refusal
		err        error
		wantStatus int
		wantCode   string
	}{
		{name: "token check, server unreachable", refuse: func(err error) *refusal { return a.storeRefusal(err, "x") }, err: refused, wantStatus: 503, wantCode: "store_unavailable"},
		{name: "token check, other failure", refuse: func(err error) *refusal { return a.storeRefusal(err, "x") }, err: errors.New("corrupt"), wantStatus: 500, wantCode: "internal_error"},
		{name: "reserve, outage known", refuse: a.reserveRefusal, err: errStoreUnavailable, wantStatus: 503, wantCode: "store_unavailable"},
		{name: "reserve, queue full", refuse: a.reserveRefusal, err: store.ErrQueueFull, wantStatus: 503, wantCode: "service_unavailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rf := tc.refuse(tc.err)
			if rf.status != tc.wantStatus || rf.code != tc.wantCode {
				t.Fatalf("got %d %s, want %d %s", rf.status, rf.code, tc.wantStatus, tc.wantCode)
			}
			if (rf.status == 503) != (rf.retryAfter != "") {
				t.Fatalf("status %d with Retry-After %q", rf.status, rf.retryAfter)
			}
		})
	}
}
