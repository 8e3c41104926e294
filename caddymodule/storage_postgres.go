package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/pgstore"
)

func init() {
	caddy.RegisterModule(new(PostgresStorage))
}

// CursorKeyEnv is the environment variable PostgresStorage reads its
// cursor key from when the config gives none.
const CursorKeyEnv = "PROMPTWALL_CURSOR_KEY"

// minCursorKey is the shortest cursor key accepted, in bytes.
const minCursorKey = 32

// PostgresStorage keeps everything in PostgreSQL, so that several gateway
// instances share it: a record written through one is listed by the API
// of every other, and a pagination cursor issued by one is accepted by
// all. Each instance writes its own records in batches; the schema is
// migrated at start. The app's queue, durability and retention settings
// apply; retention runs on one instance at a time.
type PostgresStorage struct {
	// DSN is the connection string (a postgres:// URL or key=value pairs,
	// as libpq reads them); placeholders are replaced, so the password
	// can stay out of the config: dsn {env.PROMPTWALL_PG_DSN}. Required.
	DSN string `json:"dsn,omitempty"`
	// CursorKey signs the API's pagination cursors: at least 32 bytes,
	// the same on every instance, or a cursor from one is refused by
	// another. Placeholders are replaced. Default: the environment
	// variable PROMPTWALL_CURSOR_KEY.
	CursorKey string `json:"cursor_key,omitempty"`
	// MaxConns bounds this instance's connection pool. Default: 10.
	MaxConns int `json:"max_conns,omitempty"`

	key string
}

// CaddyModule returns the Caddy module information.
func (*PostgresStorage) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "promptwall.storage.postgres", New: func() caddy.Module { return new(PostgresStorage) }}
}

// Provision replaces placeholders and applies defaults.
func (p *PostgresStorage) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	p.DSN = repl.ReplaceKnown(p.DSN, "")
	if p.CursorKey == "" {
		p.CursorKey = os.Getenv(CursorKeyEnv)
	} else {
		p.CursorKey = repl.ReplaceKnown(p.CursorKey, "")
	}
	if p.MaxConns == 0 {
		p.MaxConns = 10
	}
	if err := getPoolMetrics().register(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering storage pool metrics: %w", err)
	}
	p.key = strings.Join([]string{"postgres", p.DSN, p.CursorKey, strconv.Itoa(p.MaxConns)}, "\x00")
	return nil
}

// Validate checks what can be checked without connecting. Errors never
// quote the DSN or the key: both may be secrets.
func (p *PostgresStorage) Validate() error {
	if p.DSN == "" {
		return errors.New("storage postgres: dsn is required (for example dsn {env.PROMPTWALL_PG_DSN}); it is empty, or names an unset environment variable")
	}
	if _, err := pgxpool.ParseConfig(p.DSN); err != nil {
		return errors.New("storage postgres: dsn is not a valid PostgreSQL connection string (a postgres:// URL or key=value pairs)")
	}
	if len(p.CursorKey) < minCursorKey {
		return fmt.Errorf("storage postgres: cursor_key must be at least %d bytes and the same on every instance "+
			"(set %s, or cursor_key in the config); it has %d", minCursorKey, CursorKeyEnv, len(p.CursorKey))
	}
	if p.MaxConns < 0 || p.MaxConns > 1<<16 {
		return fmt.Errorf("storage postgres: max_conns %d out of range", p.MaxConns)
	}
	return nil
}

// StorageKey is the connection settings: configs naming the same database
// the same way share one pool across reloads.
func (p *PostgresStorage) StorageKey() string { return p.key }

// OpenStore connects, migrates the schema and starts the writer.
func (p *PostgresStorage) OpenStore(ctx context.Context, o StorageOptions) (store.Backend, error) {
	if o.OpenTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.OpenTimeout)
		defer cancel()
	}
	st, err := pgstore.Open(ctx, pgstore.Options{
		DSN:         p.DSN,
		CursorKey:   []byte(p.CursorKey),
		MaxConns:    int32(p.MaxConns),
		QueueSize:   o.QueueSize,
		EnqueueWait: o.EnqueueWait,
		Durability:  o.Durability,
		Retention:   o.Retention,
		Observer:    o.Observer,
		Logger:      o.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("storage postgres: opening the database (within open_timeout %s): %w", o.OpenTimeout, err)
	}
	getPoolMetrics().watch(st.Pool())
	cfg := st.Pool().Config().ConnConfig
	o.Logger.Info("promptwall store opened", zap.String("engine", "postgres"),
		zap.String("host", cfg.Host), zap.Uint16("port", cfg.Port), zap.String("database", cfg.Database))
	return &pgBackend{Store: st}, nil
}

// pgBackend stops the pool's metrics when the store closes.
type pgBackend struct{ *pgstore.Store }

func (b *pgBackend) Close() error {
	getPoolMetrics().unwatch(b.Pool())
	return b.Store.Close()
}

// Unavailable tells whether err means the server cannot be reached or is
// not accepting work: a failed connection, a connection lost mid-call, or
// the server shutting down, starting up or out of connections.
func (p *PostgresStorage) Unavailable(err error) bool {
	return pgUnavailable(err)
}

func pgUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		// Class 08 is "connection exception"; 57P01-57P03 are the
		// administrator's shutdown, a crash shutdown and "cannot connect
		// now"; 53300 is too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300"
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// UnmarshalCaddyfile reads the engine's block:
//
//	storage postgres {
//	    dsn        <connection string>
//	    cursor_key <at least 32 bytes>
//	    max_conns  <connections>
//	}
func (p *PostgresStorage) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseEngineBlock(d, "storage postgres", map[string]any{"dsn": &p.DSN, "cursor_key": &p.CursorKey, "max_conns": &p.MaxConns})
}

// poolMetrics read the connection pools at scrape time.
type poolMetrics struct {
	conns        *prometheus.Desc
	acquires     *prometheus.Desc
	waited       *prometheus.Desc
	waitSeconds  *prometheus.Desc
	acquireTotal *prometheus.Desc

	mu    sync.Mutex
	pools map[*pgxpool.Pool]struct{}
}

var (
	poolMetricsOnce sync.Once
	poolMetricsVal  *poolMetrics
)

func getPoolMetrics() *poolMetrics {
	poolMetricsOnce.Do(func() {
		name := func(n string) string { return prometheus.BuildFQName(metricsNamespace, "store_pool", n) }
		poolMetricsVal = &poolMetrics{
			conns: prometheus.NewDesc(name("connections"),
				"Connections of the PostgreSQL pool, by state (in_use, idle, max).", []string{"state"}, nil),
			acquires: prometheus.NewDesc(name("acquires_total"),
				"Connections taken from the pool.", nil, nil),
			waited: prometheus.NewDesc(name("acquires_waited_total"),
				"Connections taken from the pool after waiting for one to free up (the pool was exhausted).", nil, nil),
			waitSeconds: prometheus.NewDesc(name("wait_seconds_total"),
				"Time spent waiting for a free connection when the pool was exhausted.", nil, nil),
			acquireTotal: prometheus.NewDesc(name("acquire_seconds_total"),
				"Time spent taking connections from the pool, waits and new connections included.", nil, nil),
			pools: map[*pgxpool.Pool]struct{}{},
		}
	})
	return poolMetricsVal
}

func (m *poolMetrics) register(reg prometheus.Registerer) error {
	return registerAll(reg, m)
}

func (m *poolMetrics) watch(p *pgxpool.Pool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pools[p] = struct{}{}
}

func (m *poolMetrics) unwatch(p *pgxpool.Pool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pools, p)
}

// Describe sends the descriptors.
func (m *poolMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.conns, m.acquires, m.waited, m.waitSeconds, m.acquireTotal} {
		ch <- d
	}
}

// Collect sums the open pools' statistics.
func (m *poolMetrics) Collect(ch chan<- prometheus.Metric) {
	var inUse, idle, maxConns, acquires, waited int64
	var wait, acquire float64
	m.mu.Lock()
	for p := range m.pools {
		st := p.Stat()
		inUse += int64(st.AcquiredConns())
		idle += int64(st.IdleConns())
		maxConns += int64(st.MaxConns())
		acquires += st.AcquireCount()
		waited += st.EmptyAcquireCount()
		wait += st.EmptyAcquireWaitTime().Seconds()
		acquire += st.AcquireDuration().Seconds()
	}
	m.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(m.conns, prometheus.GaugeValue, float64(inUse), "in_use")
	ch <- prometheus.MustNewConstMetric(m.conns, prometheus.GaugeValue, float64(idle), "idle")
	ch <- prometheus.MustNewConstMetric(m.conns, prometheus.GaugeValue, float64(maxConns), "max")
	ch <- prometheus.MustNewConstMetric(m.acquires, prometheus.CounterValue, float64(acquires))
	ch <- prometheus.MustNewConstMetric(m.waited, prometheus.CounterValue, float64(waited))
	ch <- prometheus.MustNewConstMetric(m.waitSeconds, prometheus.CounterValue, wait)
	ch <- prometheus.MustNewConstMetric(m.acquireTotal, prometheus.CounterValue, acquire)
}

// Interface guards
var (
	_ caddy.Provisioner      = (*PostgresStorage)(nil)
	_ caddy.Validator        = (*PostgresStorage)(nil)
	_ caddyfile.Unmarshaler  = (*PostgresStorage)(nil)
	_ StorageEngine          = (*PostgresStorage)(nil)
	_ unavailabilityReporter = (*PostgresStorage)(nil)
	_ prometheus.Collector   = (*poolMetrics)(nil)
	_ store.Backend          = (*pgBackend)(nil)
	_ store.Locker           = (*pgBackend)(nil)
)
