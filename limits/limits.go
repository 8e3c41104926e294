// Package limits enforces a provider's traffic limits: maxRequestsPerSecond
// as a token bucket and requestConcurrencyLimit as a resizable semaphore
// held until the answer has been written completely (streamed answers
// included). A Registry keeps one Limiter per provider across config
// reloads and updates its limits in place, so a reload neither refills a
// bucket nor forgets the requests in flight.
//
// The package imports no Caddy and no HTTP: callers turn a *LimitError into
// a 429 with its RetryAfter.
package limits

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Sentinel errors. Acquire's errors are *LimitError values wrapping one of
// them.
var (
	// ErrRateLimited: no token of maxRequestsPerSecond became due within
	// the wait allowed.
	ErrRateLimited = errors.New("limits: request rate limit reached")
	// ErrConcurrencyLimited: no slot of requestConcurrencyLimit became
	// free within the wait allowed.
	ErrConcurrencyLimited = errors.New("limits: concurrency limit reached")
	// ErrInvalidConfig: a limit string is not a positive decimal.
	ErrInvalidConfig = errors.New("limits: invalid limit")
	// ErrUnavailable: a shared limiter could not reach its store (Redis)
	// and fails closed. The error wraps the cause as well.
	ErrUnavailable = errors.New("limits: limiter store unavailable")
)

// Reasons passed to Observer.Rejected; bounded, so fit as metric labels.
const (
	ReasonRate        = "rate"
	ReasonConcurrency = "concurrency"
	ReasonCanceled    = "canceled"
	// ReasonUnavailable: a shared limiter failed closed.
	ReasonUnavailable = "unavailable"
)

// concurrencyRetryAfter is the Retry-After of a concurrency rejection. When
// a slot frees depends on how long other answers take, which is unknown;
// one second is the smallest value Retry-After can say.
const concurrencyRetryAfter = time.Second

// LimitError is the error of a refused Acquire.
type LimitError struct {
	// Provider is the limiter's name.
	Provider string
	// Err is ErrRateLimited, ErrConcurrencyLimited, or the context's error
	// when the caller gave up first.
	Err error
	// RetryAfter is when a retry may succeed: for the rate limit, when the
	// next token is due; for the concurrency limit, a one-second guess.
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("provider %q: %v (retry after %s)", e.Provider, e.Err, e.RetryAfter)
}

func (e *LimitError) Unwrap() error { return e.Err }

// Config is a provider's limits. Zero values mean "no limit".
type Config struct {
	// MaxRequestsPerSecond is the sustained request rate; the bucket holds
	// max(1, ceil(rate)) tokens, so a second's worth may arrive at once.
	MaxRequestsPerSecond float64
	// RequestConcurrencyLimit bounds the requests in flight at once.
	RequestConcurrencyLimit int
}

// Unlimited reports whether c limits nothing.
func (c Config) Unlimited() bool {
	return c.MaxRequestsPerSecond <= 0 && c.RequestConcurrencyLimit <= 0
}

var decimalRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseConfig reads the providers' limits, given as decimal strings: ""
// means no limit; anything else must be a positive decimal number
// ("2", "0.5"), and the concurrency limit a positive integer. Zero is
// refused rather than read as "unlimited" or "block everything": either
// reading would surprise half of the operators who write it.
func ParseConfig(maxRequestsPerSecond, requestConcurrencyLimit string) (Config, error) {
	var c Config
	if s := maxRequestsPerSecond; s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if !decimalRE.MatchString(s) || err != nil || v <= 0 || math.IsInf(v, 0) {
			return Config{}, fmt.Errorf("%w: maxRequestsPerSecond %q must be a positive decimal such as \"5\" or \"0.5\"; leave it empty for no limit", ErrInvalidConfig, s)
		}
		c.MaxRequestsPerSecond = v
	}
	if s := requestConcurrencyLimit; s != "" {
		v, err := strconv.Atoi(s)
		if !decimalRE.MatchString(s) || err != nil || v <= 0 {
			return Config{}, fmt.Errorf("%w: requestConcurrencyLimit %q must be a positive integer; leave it empty for no limit", ErrInvalidConfig, s)
		}
		c.RequestConcurrencyLimit = v
	}
	return c, nil
}

// Clock is the time source of the token bucket and of the waits. Tests use
// a fake one; the default is the real clock.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Observer receives limiter events for metrics. Provider names come from
// config and are bounded. Calls come from request goroutines, so
// implementations must be cheap and safe for concurrent use.
type Observer interface {
	// InFlight reports the number of slots held after a change.
	InFlight(provider string, n int)
	// Rejected reports a refused Acquire: ReasonRate, ReasonConcurrency or
	// ReasonCanceled.
	Rejected(provider, reason string)
	// Waited reports how long a successful Acquire waited.
	Waited(provider string, d time.Duration)
}

type nopObserver struct{}

func (nopObserver) InFlight(string, int)         {}
func (nopObserver) Rejected(string, string)      {}
func (nopObserver) Waited(string, time.Duration) {}

// Limiter enforces one provider's limits. It is safe for concurrent use.
type Limiter struct {
	name  string
	clock Clock
	obs   Observer

	// unlimited is the fast path: no lock, no allocation.
	unlimited atomic.Bool

	mu  sync.Mutex // guards cfg and the semaphore below
	cfg Config
	// rl is nil while the rate is unlimited. rate.Limiter keeps its own
	// lock; it is replaced never, only retuned, so a reload keeps the
	// bucket's level.
	rl *rate.Limiter
	// The semaphore: capacity (0 = unlimited), slots held and FIFO
	// waiters. held counts only real holders, so a capacity change
	// applies to new admissions without forgetting or double-counting a
	// slot in use.
	capacity int
	held     int
	waiters  []*waiter
}

type waiter struct {
	ready   chan struct{}
	granted bool // set under mu when the slot is handed over
}

// New returns a limiter for cfg. A nil clock is the real clock; a nil
// observer observes nothing.
func New(name string, cfg Config, clock Clock, obs Observer) *Limiter {
	if clock == nil {
		clock = realClock{}
	}
	if obs == nil {
		obs = nopObserver{}
	}
	l := &Limiter{name: name, clock: clock, obs: obs}
	l.SetConfig(cfg)
	return l
}

func burstFor(r float64) int {
	return max(1, int(math.Ceil(r)))
}

// Name returns the provider name the limiter was made for.
func (l *Limiter) Name() string { return l.name }

// Config returns the limits in force.
func (l *Limiter) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// InFlight returns the number of slots held.
func (l *Limiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// SetConfig changes the limits in place. The token bucket keeps its level
// (capped at the new burst); the semaphore keeps its holders: after a
// shrink, new requests wait until enough of them have finished; after a
// grow, waiters are admitted at once. Requests admitted while the
// concurrency limit was unlimited hold no slot and are not counted
// against a limit configured later.
func (l *Limiter) SetConfig(cfg Config) {
	if cfg.MaxRequestsPerSecond < 0 {
		cfg.MaxRequestsPerSecond = 0
	}
	if cfg.RequestConcurrencyLimit < 0 {
		cfg.RequestConcurrencyLimit = 0
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = cfg
	switch {
	case cfg.MaxRequestsPerSecond == 0:
		l.rl = nil
	case l.rl == nil:
		// A new bucket starts full, as rate.NewLimiter does.
		l.rl = rate.NewLimiter(rate.Limit(cfg.MaxRequestsPerSecond), burstFor(cfg.MaxRequestsPerSecond))
	default:
		l.rl.SetLimitAt(now, rate.Limit(cfg.MaxRequestsPerSecond))
		l.rl.SetBurstAt(now, burstFor(cfg.MaxRequestsPerSecond))
	}
	l.capacity = cfg.RequestConcurrencyLimit
	l.grantLocked()
	l.unlimited.Store(cfg.Unlimited())
}

// grantLocked hands free slots to waiters in arrival order.
func (l *Limiter) grantLocked() {
	for len(l.waiters) > 0 && (l.capacity == 0 || l.held < l.capacity) {
		w := l.waiters[0]
		l.waiters[0] = nil
		l.waiters = l.waiters[1:]
		w.granted = true
		l.held++
		close(w.ready)
	}
	if len(l.waiters) == 0 {
		l.waiters = nil
	}
}

func noop() {}

// Acquire admits one request. It waits up to maxWait (0: not at all) for a
// concurrency slot and a rate token, then returns a release func that
// must be called once the answer has been written completely; calling it
// again does nothing, so `defer release()` is safe next to an early call.
// A refusal is a *LimitError wrapping ErrConcurrencyLimited,
// ErrRateLimited or, when ctx ended first, ctx's error.
func (l *Limiter) Acquire(ctx context.Context, maxWait time.Duration) (release func(), err error) {
	if l.unlimited.Load() {
		return noop, nil
	}
	return admit(l.name, l.obs, l.clock.Now, maxWait, func(deadline time.Time) (func(), error) {
		slot, err := l.acquireSlot(ctx, deadline)
		if err != nil {
			return nil, err
		}
		return l.releaser(slot), nil
	}, func(deadline time.Time) error {
		return l.takeToken(ctx, deadline)
	})
}

// admit is the order in which every gate admits a request, local or
// shared: a concurrency slot, then a rate token, both before now+maxWait,
// and the time waited reported once admitted. The slot is taken before the
// token: a request refused for want of a slot then never spends a token,
// while one refused for want of a token gives its slot straight back.
func admit(name string, obs Observer, now func() time.Time, maxWait time.Duration,
	slot func(deadline time.Time) (release func(), err error), token func(deadline time.Time) error) (func(), error) {
	start := now()
	deadline := start.Add(max(maxWait, 0))
	release, err := slot(deadline)
	if err != nil {
		return nil, err
	}
	if err := token(deadline); err != nil {
		release()
		return nil, err
	}
	obs.Waited(name, now().Sub(start))
	return release, nil
}

// acquireSlot reports whether a slot was taken (false when the concurrency
// limit is off).
func (l *Limiter) acquireSlot(ctx context.Context, deadline time.Time) (bool, error) {
	l.mu.Lock()
	if l.capacity == 0 {
		l.mu.Unlock()
		return false, nil
	}
	if len(l.waiters) == 0 && l.held < l.capacity {
		l.held++
		n := l.held
		l.mu.Unlock()
		l.obs.InFlight(l.name, n)
		return true, nil
	}
	wait := deadline.Sub(l.clock.Now())
	if wait <= 0 {
		l.mu.Unlock()
		return false, l.reject(ErrConcurrencyLimited, ReasonConcurrency, concurrencyRetryAfter)
	}
	w := &waiter{ready: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()

	var cause error
	select {
	case <-w.ready:
	case <-l.clock.After(wait):
		cause = ErrConcurrencyLimited
	case <-ctx.Done():
		cause = ctx.Err()
	}
	l.mu.Lock()
	if w.granted {
		// Granted while giving up: the slot is ours, and using it is
		// better than handing it back and refusing.
		n := l.held
		l.mu.Unlock()
		l.obs.InFlight(l.name, n)
		return true, nil
	}
	for i, o := range l.waiters {
		if o == w {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	if cause == ErrConcurrencyLimited {
		return false, l.reject(cause, ReasonConcurrency, concurrencyRetryAfter)
	}
	return false, l.reject(cause, ReasonCanceled, 0)
}

func (l *Limiter) releaser(slot bool) func() {
	if !slot {
		return noop
	}
	var done atomic.Bool
	return func() {
		if !done.CompareAndSwap(false, true) {
			return
		}
		l.mu.Lock()
		l.held--
		l.grantLocked()
		n := l.held
		l.mu.Unlock()
		l.obs.InFlight(l.name, n)
	}
}

func (l *Limiter) takeToken(ctx context.Context, deadline time.Time) error {
	l.mu.Lock()
	rl := l.rl
	l.mu.Unlock()
	if rl == nil {
		return nil
	}
	now := l.clock.Now()
	if rl.AllowN(now, 1) {
		return nil
	}
	if !deadline.After(now) {
		// No wait allowed: refuse without touching the bucket. Reserving
		// and cancelling on every refusal drifts x/time/rate's state under
		// contention and under-admits (measured: 16/s of 20/s).
		return l.reject(ErrRateLimited, ReasonRate, nextTokenIn(rl, now))
	}
	r := rl.ReserveN(now, 1)
	if !r.OK() {
		// Burst is at least 1, so this is a limiter being retuned under
		// us; treat it like an exhausted bucket.
		return l.reject(ErrRateLimited, ReasonRate, time.Second)
	}
	delay := r.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	if now.Add(delay).After(deadline) {
		// Giving the token back before its time keeps the bucket
		// exact for the requests behind this one.
		r.CancelAt(now)
		return l.reject(ErrRateLimited, ReasonRate, delay)
	}
	select {
	case <-l.clock.After(delay):
		return nil
	case <-ctx.Done():
		r.CancelAt(l.clock.Now())
		return l.reject(ctx.Err(), ReasonCanceled, 0)
	}
}

// nextTokenIn is how long until the bucket holds a whole token.
func nextTokenIn(rl *rate.Limiter, now time.Time) time.Duration {
	lim := float64(rl.Limit())
	if lim <= 0 {
		return time.Second
	}
	missing := 1 - rl.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / lim * float64(time.Second))
}

func (l *Limiter) reject(err error, reason string, retry time.Duration) error {
	return refuse(l.obs, l.name, err, reason, retry)
}

// refuse counts a refusal of the named provider's gate and returns it.
func refuse(obs Observer, name string, err error, reason string, retry time.Duration) error {
	obs.Rejected(name, reason)
	return &LimitError{Provider: name, Err: err, RetryAfter: retry}
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1: the value of a
// Retry-After header.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(1, s)
}

// Registry keeps one Limiter per provider name. It is meant to outlive
// config reloads (held in a caddy.UsagePool by the app), which is what
// makes limits hold across reloads. It is safe for concurrent use.
type Registry struct {
	clock Clock
	obs   Observer

	mu       sync.Mutex
	limiters map[string]*Limiter
}

// NewRegistry returns an empty registry. Nil clock and observer as in New.
func NewRegistry(clock Clock, obs Observer) *Registry {
	return &Registry{clock: clock, obs: obs, limiters: make(map[string]*Limiter)}
}

// Get returns the limiter of the named provider, creating it on first use
// and otherwise updating its limits in place to cfg.
func (r *Registry) Get(name string, cfg Config) *Limiter {
	r.mu.Lock()
	l, ok := r.limiters[name]
	if !ok {
		l = New(name, cfg, r.clock, r.obs)
		r.limiters[name] = l
	}
	r.mu.Unlock()
	if ok {
		l.SetConfig(cfg)
	}
	return l
}

// Attach returns the limiter of the named provider without changing the
// limits of one that exists; a new one starts with cfg. A config being
// provisioned attaches its limiters and applies its limits with SetConfig
// only once it is certain to run: a reload that fails later must leave the
// live limits as they were.
func (r *Registry) Attach(name string, cfg Config) *Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limiters[name]
	if !ok {
		l = New(name, cfg, r.clock, r.obs)
		r.limiters[name] = l
	}
	return l
}

// Lookup returns the named provider's limiter without changing it.
func (r *Registry) Lookup(name string) (*Limiter, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limiters[name]
	return l, ok
}

// Retain forgets the limiters of providers not in keep (removed from the
// config) and returns how many it forgot. Holders of a forgotten limiter
// keep using it until they release.
func (r *Registry) Retain(keep []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return retain(r.limiters, keep)
}

// retain deletes the entries of m not named in keep and returns how many
// it deleted.
func retain[V any](m map[string]V, keep []string) int {
	set := make(map[string]bool, len(keep))
	for _, k := range keep {
		set[k] = true
	}
	n := 0
	for name := range m {
		if !set[name] {
			delete(m, name)
			n++
		}
	}
	return n
}
