package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of RedisOptions.
const (
	DefaultRedisPrefix       = "promptwall:limits:"
	DefaultLeaseTTL          = 15 * time.Second
	DefaultRedisPollInterval = 20 * time.Millisecond
	DefaultRedisCallTimeout  = time.Second
)

// Operations reported to RedisObserver.Call; bounded, so fit as labels.
const (
	OpRate    = "rate"
	OpRefund  = "refund"
	OpAcquire = "acquire"
	OpRenew   = "renew"
	OpRelease = "release"
)

// RedisOptions configures NewRedisSet. Zero fields take the default.
type RedisOptions struct {
	// Prefix starts every key. Instances that share limits use the same
	// prefix; default "promptwall:limits:".
	Prefix string
	// LeaseTTL is how long a concurrency slot stays taken without being
	// renewed: the slots of an instance that crashed come back within it.
	// Held slots are renewed every LeaseTTL/3. Default 15s.
	LeaseTTL time.Duration
	// PollInterval is how often a request waiting for a slot asks Redis
	// again. Default 20ms.
	PollInterval time.Duration
	// CallTimeout bounds each Redis round trip. Default 1s.
	CallTimeout time.Duration
	// FailOpen admits requests unchecked while Redis is unreachable. The
	// default refuses them with ErrUnavailable: an outage of the limiter
	// must not let a fleet exceed a provider's quota unless the operator
	// chose so.
	FailOpen bool
	// Observer receives the same events as a local limiter's; optional.
	// InFlight counts the slots held by this instance.
	Observer Observer
	// Redis receives Redis round trips and outages; optional.
	Redis RedisObserver
}

// RedisObserver receives the shared limiter's Redis events, for metrics.
type RedisObserver interface {
	// Call reports one round trip of operation op (OpRate, ...).
	Call(op string, d time.Duration, err error)
	// Unavailable reports a request decided without Redis: admitted
	// (fail open) or refused (fail closed).
	Unavailable(provider string, admitted bool)
	// LeasesLost reports slots whose lease had expired when renewed
	// (Redis unreachable for longer than the lease): they are no longer
	// counted by other instances.
	LeasesLost(n int)
}

type nopRedisObserver struct{}

func (nopRedisObserver) Call(string, time.Duration, error) {}
func (nopRedisObserver) Unavailable(string, bool)          {}
func (nopRedisObserver) LeasesLost(int)                    {}

// The request rate is a GCRA (generic cell rate algorithm): one number per
// provider, the theoretical arrival time (TAT) of the next request in
// microseconds of Redis's clock. Every instance reads Redis's clock, so
// instances with skewed clocks still share one bucket. A request that
// conforms within the caller's wait moves the TAT on by one emission
// interval and is told how long to wait; one that does not leaves it
// untouched and learns when it would conform.
//
// KEYS[1] rate key; ARGV[1] emission interval (us), ARGV[2] burst,
// ARGV[3] longest wait (us). Returns {admitted 0|1, delay us}.
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local newtat = tat + interval
local delay = newtat - burst * interval - now
if delay > maxwait then
  return {0, math.ceil(delay)}
end
if delay < 0 then delay = 0 end
local ttl = math.ceil((newtat - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.1f', newtat), 'PX', ttl)
return {1, math.ceil(delay)}
`)

// refundScript gives back a token reserved by a caller that gave up
// before its turn, so the requests behind it are not delayed for nothing.
//
// KEYS[1] rate key; ARGV[1] emission interval (us).
var refundScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = tat - tonumber(ARGV[1])
if back < now then back = now end
if tat > now then
  redis.call('SET', KEYS[1], string.format('%.1f', back), 'KEEPTTL')
end
return 1
`)

// The concurrency limit is a sorted set of leases scored by their expiry
// in milliseconds of Redis's clock. Expired leases are dropped before
// counting, which is what returns the slots of a crashed holder.
//
// KEYS[1] slot key; ARGV[1] limit, ARGV[2] lease ms, ARGV[3] member.
// Returns 1 when the lease was taken.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], lease * 2)
  return 1
end
return 0
`)

// renewScript pushes the expiry of leases still held. ZADD XX never
// re-adds a lease that expired meanwhile: its slot may already be someone
// else's.
//
// KEYS[1] slot key; ARGV[1] lease ms, ARGV[2..] members. Returns how many
// were renewed.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', now + lease, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], lease * 2)
return n
`)

// RedisSet keeps providers' limits in Redis, shared by every instance
// using the same Redis and Prefix. It is safe for concurrent use; Close
// stops the lease renewal.
type RedisSet struct {
	client redis.UniversalClient
	opts   RedisOptions
	obs    Observer
	robs   RedisObserver
	// instance prefixes this process's lease members, so an operator
	// looking at a slot key sees which instance holds what.
	instance string
	seq      atomic.Uint64

	mu    sync.Mutex
	gates map[string]*RedisGate

	leaseMu sync.Mutex
	leases  map[*lease]struct{}

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type lease struct {
	key    string
	member string
}

// NewRedisSet returns a Set keeping its state in client's Redis and starts
// the lease renewal. The caller keeps ownership of client.
func NewRedisSet(client redis.UniversalClient, opts RedisOptions) *RedisSet {
	setDefaultDur(&opts.LeaseTTL, DefaultLeaseTTL)
	setDefaultDur(&opts.PollInterval, DefaultRedisPollInterval)
	setDefaultDur(&opts.CallTimeout, DefaultRedisCallTimeout)
	if opts.Prefix == "" {
		opts.Prefix = DefaultRedisPrefix
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	s := &RedisSet{
		client:   client,
		opts:     opts,
		obs:      opts.Observer,
		robs:     opts.Redis,
		instance: hex.EncodeToString(id),
		gates:    make(map[string]*RedisGate),
		leases:   make(map[*lease]struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if s.robs == nil {
		s.robs = nopRedisObserver{}
	}
	go s.renewLoop()
	return s
}

func setDefaultDur(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Get returns the named provider's gate, creating it on first use and
// otherwise updating its limits to cfg. The state itself is in Redis, so
// a reload (or another instance) keeps the bucket and the leases.
func (s *RedisSet) Get(name string, cfg Config) Gate {
	g, existed := s.attach(name, cfg)
	if existed {
		g.SetConfig(cfg)
	}
	return g
}

// Attach returns the named provider's gate without changing the limits of
// one that exists; a new one starts with cfg.
func (s *RedisSet) Attach(name string, cfg Config) Gate {
	g, _ := s.attach(name, cfg)
	return g
}

func (s *RedisSet) attach(name string, cfg Config) (*RedisGate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gates[name]
	if !ok {
		g = &RedisGate{
			set:     s,
			name:    name,
			rateKey: s.opts.Prefix + "rate:" + name,
			slotKey: s.opts.Prefix + "slots:" + name,
		}
		g.SetConfig(cfg)
		s.gates[name] = g
	}
	return g, ok
}

// Lookup returns the named provider's gate without changing it.
func (s *RedisSet) Lookup(name string) (Gate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gates[name]
	if !ok {
		return nil, false
	}
	return g, true
}

// Retain forgets the gates of providers not in keep. Their keys in Redis
// expire on their own.
func (s *RedisSet) Retain(keep []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return retain(s.gates, keep)
}

// HeldLeases returns how many concurrency slots this instance holds.
func (s *RedisSet) HeldLeases() int {
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	return len(s.leases)
}

// Close stops renewing leases and gives back those still held. It does
// not close the client.
func (s *RedisSet) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.leaseMu.Lock()
		held := make([]*lease, 0, len(s.leases))
		for l := range s.leases {
			held = append(held, l)
		}
		clear(s.leases)
		s.leaseMu.Unlock()
		for _, l := range held {
			s.releaseLease(l)
		}
	})
	return nil
}

// abandon stops renewing without giving leases back: what a crash does.
// Tests use it.
func (s *RedisSet) abandon() {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
	})
}

func (s *RedisSet) renewLoop() {
	defer close(s.done)
	t := time.NewTicker(s.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.renew()
		}
	}
}

// renew pushes the expiry of every lease held, one round trip per key.
func (s *RedisSet) renew() {
	byKey := map[string][]any{}
	s.leaseMu.Lock()
	for l := range s.leases {
		if byKey[l.key] == nil {
			byKey[l.key] = []any{s.opts.LeaseTTL.Milliseconds()}
		}
		byKey[l.key] = append(byKey[l.key], l.member)
	}
	s.leaseMu.Unlock()
	for key, args := range byKey {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
		start := time.Now()
		n, err := renewScript.Run(ctx, s.client, []string{key}, args...).Int()
		cancel()
		s.robs.Call(OpRenew, time.Since(start), err)
		if err == nil && n < len(args)-1 {
			s.robs.LeasesLost(len(args) - 1 - n)
		}
	}
}

func (s *RedisSet) releaseLease(l *lease) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	defer cancel()
	start := time.Now()
	// A failed release is not retried: the lease expires within LeaseTTL.
	err := s.client.ZRem(ctx, l.key, l.member).Err()
	s.robs.Call(OpRelease, time.Since(start), err)
}

// RedisGate is one provider's limits in Redis. Acquire behaves as
// Limiter.Acquire's, with two differences: slots are granted to waiters by
// polling, not in arrival order, and a Redis outage is decided by
// RedisOptions.FailOpen.
type RedisGate struct {
	set     *RedisSet
	name    string
	rateKey string
	slotKey string
	cfg     atomic.Pointer[Config]
	held    atomic.Int64
}

// SetConfig changes this instance's limits; the state in Redis stays.
func (g *RedisGate) SetConfig(cfg Config) {
	cfg.MaxRequestsPerSecond = max(cfg.MaxRequestsPerSecond, 0)
	cfg.RequestConcurrencyLimit = max(cfg.RequestConcurrencyLimit, 0)
	g.cfg.Store(&cfg)
}

// Name returns the provider name.
func (g *RedisGate) Name() string { return g.name }

// Config returns the limits in force on this instance.
func (g *RedisGate) Config() Config { return *g.cfg.Load() }

// Acquire admits one request; see Limiter.Acquire. When Redis cannot be
// reached, it admits the request holding nothing (FailOpen) or refuses it
// with a *LimitError wrapping ErrUnavailable.
func (g *RedisGate) Acquire(ctx context.Context, maxWait time.Duration) (func(), error) {
	cfg := g.Config()
	if cfg.Unlimited() {
		return noop, nil
	}
	return admit(g.name, g.set.obs, time.Now, maxWait, func(deadline time.Time) (func(), error) {
		if cfg.RequestConcurrencyLimit <= 0 {
			return noop, nil
		}
		l, err := g.acquireSlot(ctx, cfg.RequestConcurrencyLimit, deadline)
		if err != nil || l == nil {
			return noop, err
		}
		return g.releaser(l), nil
	}, func(deadline time.Time) error {
		if cfg.MaxRequestsPerSecond <= 0 {
			return nil
		}
		return g.takeToken(ctx, cfg.MaxRequestsPerSecond, deadline)
	})
}

// call runs one script with the call timeout and reports it.
func (g *RedisGate) call(ctx context.Context, op string, sc *redis.Script, key string, args ...any) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, g.set.opts.CallTimeout)
	defer cancel()
	start := time.Now()
	var out []int64
	v, err := sc.Run(ctx, g.set.client, []string{key}, args...).Result()
	if err == nil {
		switch v := v.(type) {
		case int64:
			out = []int64{v}
		case []any:
			for _, e := range v {
				n, ok := e.(int64)
				if !ok {
					err = fmt.Errorf("limits: redis %s: unexpected reply %v", op, v)
					break
				}
				out = append(out, n)
			}
		default:
			err = fmt.Errorf("limits: redis %s: unexpected reply %v", op, v)
		}
	}
	g.set.robs.Call(op, time.Since(start), err)
	return out, err
}

// failure decides a request whose Redis call failed: nil when failing
// open, else the refusal.
func (g *RedisGate) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return g.reject(ctx.Err(), ReasonCanceled, 0)
	}
	if g.set.opts.FailOpen {
		g.set.robs.Unavailable(g.name, true)
		return nil
	}
	g.set.robs.Unavailable(g.name, false)
	return g.reject(fmt.Errorf("%w: %w", ErrUnavailable, err), ReasonUnavailable, time.Second)
}

func (g *RedisGate) reject(err error, reason string, retry time.Duration) error {
	return refuse(g.set.obs, g.name, err, reason, retry)
}

// acquireSlot takes a lease, polling until deadline. It returns a nil
// lease and no error when failing open.
func (g *RedisGate) acquireSlot(ctx context.Context, limit int, deadline time.Time) (*lease, error) {
	s := g.set
	l := &lease{key: g.slotKey, member: s.instance + ":" + strconv.FormatUint(s.seq.Add(1), 36)}
	for {
		out, err := g.call(ctx, OpAcquire, acquireScript, g.slotKey, limit, s.opts.LeaseTTL.Milliseconds(), l.member)
		if err != nil {
			return nil, g.failure(ctx, err)
		}
		if out[0] == 1 {
			s.leaseMu.Lock()
			s.leases[l] = struct{}{}
			s.leaseMu.Unlock()
			s.obs.InFlight(g.name, int(g.held.Add(1)))
			return l, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, g.reject(ErrConcurrencyLimited, ReasonConcurrency, concurrencyRetryAfter)
		}
		t := time.NewTimer(min(wait, s.opts.PollInterval))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, g.reject(ctx.Err(), ReasonCanceled, 0)
		}
	}
}

func (g *RedisGate) releaser(l *lease) func() {
	var done atomic.Bool
	return func() {
		if !done.CompareAndSwap(false, true) {
			return
		}
		s := g.set
		s.leaseMu.Lock()
		_, held := s.leases[l]
		delete(s.leases, l)
		s.leaseMu.Unlock()
		g.set.obs.InFlight(g.name, int(g.held.Add(-1)))
		if held {
			s.releaseLease(l)
		}
	}
}

// takeToken takes a rate token, waiting for it when it is due before
// deadline.
func (g *RedisGate) takeToken(ctx context.Context, perSecond float64, deadline time.Time) error {
	interval := 1e6 / perSecond
	intervalArg := strconv.FormatFloat(interval, 'f', 3, 64)
	maxWait := max(time.Until(deadline).Microseconds(), 0)
	out, err := g.call(ctx, OpRate, gcraScript, g.rateKey, intervalArg, burstFor(perSecond), maxWait)
	if err != nil {
		return g.failure(ctx, err)
	}
	if len(out) != 2 {
		return g.failure(ctx, errors.New("limits: redis rate: malformed reply"))
	}
	delay := time.Duration(out[1]) * time.Microsecond
	if out[0] == 0 {
		return g.reject(ErrRateLimited, ReasonRate, delay)
	}
	if delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		// The caller is gone; the refund uses a fresh context.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.set.opts.CallTimeout)
		_, _ = g.call(rctx, OpRefund, refundScript, g.rateKey, intervalArg)
		cancel()
		return g.reject(ctx.Err(), ReasonCanceled, 0)
	}
}

var (
	_ Set  = (*RedisSet)(nil)
	_ Gate = (*RedisGate)(nil)
)
