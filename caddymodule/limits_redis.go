package caddymodule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/promptwall/promptwall/limits"
)

func init() {
	caddy.RegisterModule(new(RedisLimits))
}

// LimitsEngine keeps providers' limits. Modules in the namespace
// promptwall.limits implement it; without one, each instance keeps its
// limits in process (a provider limit then applies per instance).
type LimitsEngine interface {
	// Set returns the limits of every provider.
	Set() limits.Set
}

// Fail modes of RedisLimits.
const (
	limitsFailOpen   = "open"
	limitsFailClosed = "closed"
)

// RedisLimits keeps providers' request rates and concurrency slots in
// Redis, shared by every gateway instance using the same Redis and prefix:
// a limit of 20 requests per second is 20 for the fleet, not 20 per
// instance. Slots are leases that expire, so those held by an instance
// that crashed come back within lease_ttl.
type RedisLimits struct {
	// Addr is Redis's host:port. Required.
	Addr string `json:"addr,omitempty"`
	// Username and Password authenticate to Redis (ACL or requirepass);
	// placeholders such as {env.REDIS_PASSWORD} are replaced. Default: none.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// DB is the Redis database number. Default 0.
	DB int `json:"db,omitempty"`
	// Prefix starts every key. Default "promptwall:limits:".
	Prefix string `json:"prefix,omitempty"`
	// LeaseTTL is how long a concurrency slot stays taken without being
	// renewed, the time within which a crashed instance's slots return.
	// Default 15s.
	LeaseTTL caddy.Duration `json:"lease_ttl,omitempty"`
	// Timeout bounds each Redis round trip and connection attempt.
	// Default 1s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// PoolSize bounds the connections to Redis. Default: go-redis's, 10
	// per CPU.
	PoolSize int `json:"pool_size,omitempty"`
	// FailMode decides requests while Redis is unreachable: "closed"
	// refuses them with 503 (the default: a limiter outage must not let
	// the fleet exceed a provider's quota unless the operator says so),
	// "open" admits them unchecked.
	FailMode string `json:"fail_mode,omitempty"`

	shared  *redisShared
	poolKey string
}

// CaddyModule returns the Caddy module information.
func (*RedisLimits) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "promptwall.limits.redis", New: func() caddy.Module { return new(RedisLimits) }}
}

// redisPool holds one client and Set per configuration across reloads, so
// a reload keeps the leases it holds and their renewal.
var redisPool = caddy.NewUsagePool()

type redisShared struct {
	client *redis.Client
	set    *limits.RedisSet
}

func (r *redisShared) Destruct() error {
	getRedisMetrics().unwatchPool(r.client)
	return errors.Join(r.set.Close(), r.client.Close())
}

// Provision applies defaults and connects (lazily: Redis may come up after
// the gateway, and requests decide by the fail mode until it does).
func (r *RedisLimits) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	r.Addr = repl.ReplaceKnown(r.Addr, "")
	r.Username = repl.ReplaceKnown(r.Username, "")
	r.Password = repl.ReplaceKnown(r.Password, "")
	if r.FailMode == "" {
		r.FailMode = limitsFailClosed
	}
	if r.Timeout == 0 {
		r.Timeout = caddy.Duration(limits.DefaultRedisCallTimeout)
	}
	m := getRedisMetrics()
	if err := m.register(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering redis limits metrics: %w", err)
	}
	// The password is part of the key so that a changed password makes a
	// new client; the key is never logged.
	r.poolKey = strings.Join([]string{r.Addr, r.Username, r.Password, strconv.Itoa(r.DB), r.Prefix,
		time.Duration(r.LeaseTTL).String(), time.Duration(r.Timeout).String(), strconv.Itoa(r.PoolSize), r.FailMode}, "\x00")
	val, _, err := redisPool.LoadOrNew(r.poolKey, func() (caddy.Destructor, error) {
		client := redis.NewClient(&redis.Options{
			Addr: r.Addr, Username: r.Username, Password: r.Password, DB: r.DB,
			DialTimeout: time.Duration(r.Timeout), ReadTimeout: time.Duration(r.Timeout),
			WriteTimeout: time.Duration(r.Timeout), PoolSize: r.PoolSize,
			// Retries would multiply the time a request waits on a dead
			// Redis before the fail mode decides it.
			MaxRetries: -1,
		})
		m.watchPool(client)
		set := limits.NewRedisSet(client, limits.RedisOptions{
			Prefix:      r.Prefix,
			LeaseTTL:    time.Duration(r.LeaseTTL),
			CallTimeout: time.Duration(r.Timeout),
			FailOpen:    r.FailMode == limitsFailOpen,
			Observer:    limitsObserver{getMetrics()},
			Redis:       m,
		})
		return &redisShared{client: client, set: set}, nil
	})
	if err != nil {
		return err
	}
	r.shared = val.(*redisShared)
	return nil
}

// Validate checks the configuration.
func (r *RedisLimits) Validate() error {
	if r.Addr == "" {
		return errors.New("limits redis: addr is required")
	}
	if r.FailMode != limitsFailOpen && r.FailMode != limitsFailClosed {
		return fmt.Errorf("limits redis: fail_mode must be %q or %q, not %q", limitsFailOpen, limitsFailClosed, r.FailMode)
	}
	if r.LeaseTTL < 0 || r.Timeout < 0 || r.PoolSize < 0 || r.DB < 0 {
		return errors.New("limits redis: lease_ttl, timeout, pool_size and db must not be negative")
	}
	return nil
}

// Cleanup releases this config's reference to the shared client.
func (r *RedisLimits) Cleanup() error {
	if r.poolKey == "" {
		return nil
	}
	_, err := redisPool.Delete(r.poolKey)
	return err
}

// Set returns the shared limits.
func (r *RedisLimits) Set() limits.Set { return r.shared.set }

// UnmarshalCaddyfile reads the engine's block inside the promptwall
// global option:
//
//	limits redis {
//	    addr       <host:port>
//	    username   <name>
//	    password   <password>
//	    db         <number>
//	    prefix     <key prefix>
//	    lease_ttl  <duration>
//	    timeout    <duration>
//	    pool_size  <connections>
//	    fail_mode  open|closed
//	}
func (r *RedisLimits) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseEngineBlock(d, "limits redis", map[string]any{
		"addr": &r.Addr, "username": &r.Username, "password": &r.Password, "db": &r.DB, "prefix": &r.Prefix,
		"lease_ttl": &r.LeaseTTL, "timeout": &r.Timeout, "pool_size": &r.PoolSize, "fail_mode": &r.FailMode,
	})
}

// redisMetrics are the shared limiter's collectors, built once per process.
type redisMetrics struct {
	calls       *prometheus.HistogramVec
	errors      *prometheus.CounterVec
	unavailable *prometheus.CounterVec
	leasesLost  prometheus.Counter

	mu      sync.Mutex
	clients map[*redis.Client]struct{}
	pool    *prometheus.GaugeVec
}

var (
	redisMetricsOnce sync.Once
	redisMetricsVal  *redisMetrics
)

func getRedisMetrics() *redisMetrics {
	redisMetricsOnce.Do(func() {
		ns, sub := metricsNamespace, "limits_redis"
		redisMetricsVal = &redisMetrics{
			calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Subsystem: sub, Name: "call_duration_seconds",
				Help: "Redis round trips of the shared limiter, by operation (rate, acquire, renew, release, refund).", Buckets: latencyBuckets,
			}, []string{"op"}),
			errors: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Subsystem: sub, Name: "errors_total",
				Help: "Failed Redis round trips of the shared limiter, by operation.",
			}, []string{"op"}),
			unavailable: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Subsystem: sub, Name: "unavailable_total",
				Help: "Requests decided without Redis, by provider and decision (admitted: fail open, refused: fail closed).",
			}, []string{"provider", "decision"}),
			leasesLost: prometheus.NewCounter(prometheus.CounterOpts{
				Namespace: ns, Subsystem: sub, Name: "leases_lost_total",
				Help: "Concurrency leases found expired when renewed (Redis unreachable for longer than the lease).",
			}),
			pool: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Namespace: ns, Subsystem: sub, Name: "pool_connections",
				Help: "Connections to Redis, by state (total, idle).",
			}, []string{"state"}),
			clients: map[*redis.Client]struct{}{},
		}
	})
	return redisMetricsVal
}

func (m *redisMetrics) register(reg prometheus.Registerer) error {
	return registerAll(reg, m.calls, m.errors, m.unavailable, m.leasesLost, m)
}

// watchPool adds client's pool to the pool gauges.
func (m *redisMetrics) watchPool(c *redis.Client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients[c] = struct{}{}
}

func (m *redisMetrics) unwatchPool(c *redis.Client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clients, c)
}

// Describe and Collect make the pool gauges read the clients' pool
// statistics at scrape time.
func (m *redisMetrics) Describe(ch chan<- *prometheus.Desc) { m.pool.Describe(ch) }

func (m *redisMetrics) Collect(ch chan<- prometheus.Metric) {
	var total, idle uint32
	m.mu.Lock()
	for c := range m.clients {
		st := c.PoolStats()
		total += st.TotalConns
		idle += st.IdleConns
	}
	m.mu.Unlock()
	m.pool.WithLabelValues("total").Set(float64(total))
	m.pool.WithLabelValues("idle").Set(float64(idle))
	m.pool.Collect(ch)
}

func (m *redisMetrics) Call(op string, d time.Duration, err error) {
	m.calls.WithLabelValues(op).Observe(d.Seconds())
	if err != nil {
		m.errors.WithLabelValues(op).Inc()
	}
}

func (m *redisMetrics) Unavailable(provider string, admitted bool) {
	decision := "refused"
	if admitted {
		decision = "admitted"
	}
	m.unavailable.WithLabelValues(provider, decision).Inc()
}

func (m *redisMetrics) LeasesLost(n int) { m.leasesLost.Add(float64(n)) }

var (
	_ caddy.Provisioner     = (*RedisLimits)(nil)
	_ caddy.Validator       = (*RedisLimits)(nil)
	_ caddy.CleanerUpper    = (*RedisLimits)(nil)
	_ caddyfile.Unmarshaler = (*RedisLimits)(nil)
	_ LimitsEngine          = (*RedisLimits)(nil)
	_ limits.RedisObserver  = (*redisMetrics)(nil)
)
