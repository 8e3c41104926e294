package caddymodule

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promptwall/promptwall/scanner"
)

// metrics holds every Promptwall collector. They are built once per process
// and registered into each new config's registry on Provision: Caddy gives
// every config load a fresh registry, so keeping a pointer to the first one
// only would make the metrics read 0 after a reload.
type metrics struct {
	requests        *prometheus.CounterVec
	actions         *prometheus.CounterVec
	rejected        *prometheus.CounterVec
	scannerDuration *prometheus.HistogramVec
	scannerErrors   *prometheus.CounterVec
	screenDuration  *prometheus.HistogramVec
	upstreamSeconds *prometheus.HistogramVec
	streamTTFB      *prometheus.HistogramVec
	cacheHits       *prometheus.CounterVec
	cacheMisses     *prometheus.CounterVec

	limitRejected *prometheus.CounterVec
	inFlight      *prometheus.GaugeVec
	queueWait     *prometheus.HistogramVec

	storeQueueDepth prometheus.Gauge
	storeBatchSize  prometheus.Histogram
	storeCommit     prometheus.Histogram
	storeErrors     prometheus.Counter
	storeRejected   prometheus.Counter
	storeBytes      prometheus.Gauge
	storeEvicted    prometheus.Counter

	// The engine reports every scanner run and verdict-cache lookup, a
	// dozen times per request: their children are resolved once, not
	// hashed and looked up under the vector's lock on each call.
	verdictHits, verdictMisses prometheus.Counter
	scannerDurationByID        sync.Map // scanner ID -> prometheus.Observer
}

var (
	metricsOnce sync.Once
	pwMetrics   *metrics
)

const metricsNamespace = "promptwall"

// latencyBuckets span 10 µs to ~5 s: screening sits at the low end, upstream
// calls at the high end.
var latencyBuckets = prometheus.ExponentialBuckets(0.00001, 3, 14)

func getMetrics() *metrics {
	metricsOnce.Do(func() {
		ns := metricsNamespace
		pwMetrics = &metrics{
			requests: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "requests_screened_total",
				Help: "Requests and responses screened, by provider, project, endpoint, direction and outcome.",
			}, []string{"provider", "project", "endpoint", "direction", "outcome"}),
			actions: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "scanner_actions_total",
				Help: "Blocked, modified and flagged decisions, by scanner, provider, project and direction.",
			}, []string{"scanner", "provider", "project", "direction", "action"}),
			rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "requests_rejected_total",
				Help: "Requests refused before they were forwarded, by reason (malformed, too_large, unsupported, unauthenticated, store_full, store_unavailable, provider_limit, limiter_unavailable).",
			}, []string{"reason"}),
			scannerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Name: "scanner_duration_seconds",
				Help: "Time one scanner spent on one screening.", Buckets: latencyBuckets,
			}, []string{"scanner"}),
			scannerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "scanner_errors_total",
				Help: "Scanner failures (errors, panics, budget overruns), by scanner.",
			}, []string{"scanner"}),
			screenDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Name: "screening_duration_seconds",
				Help: "Time the whole screening of one request or response took.", Buckets: latencyBuckets,
			}, []string{"direction"}),
			upstreamSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Name: "upstream_duration_seconds",
				Help: "Time from forwarding a request to the end of the upstream answer.", Buckets: latencyBuckets,
			}, []string{"provider"}),
			streamTTFB: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Name: "stream_ttfb_seconds",
				Help: "Time from forwarding a request to the first event of its streamed answer reaching the client.", Buckets: latencyBuckets,
			}, []string{"provider"}),
			cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "cache_hits_total", Help: "Cache hits, by cache.",
			}, []string{"cache"}),
			cacheMisses: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "cache_misses_total", Help: "Cache misses, by cache.",
			}, []string{"cache"}),
			limitRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Name: "ratelimit_rejected_total",
				Help: "Requests refused with 429 by a provider's limits, by provider and reason (rate, concurrency).",
			}, []string{"provider", "reason"}),
			inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Namespace: ns, Name: "inflight_requests",
				Help: "Requests holding a provider's concurrency slot, by provider.",
			}, []string{"provider"}),
			queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Name: "queue_wait_seconds",
				Help: "Time requests waited for a provider's rate token or slot.", Buckets: latencyBuckets,
			}, []string{"provider"}),
			storeQueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
				Namespace: ns, Subsystem: "store", Name: "queue_depth",
				Help: "Records reserved or queued and not yet committed.",
			}),
			storeBatchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
				Namespace: ns, Subsystem: "store", Name: "batch_size",
				Help: "Records per commit.", Buckets: prometheus.ExponentialBuckets(1, 2, 10),
			}),
			storeCommit: prometheus.NewHistogram(prometheus.HistogramOpts{
				Namespace: ns, Subsystem: "store", Name: "commit_duration_seconds",
				Help: "Time one batch commit took.", Buckets: latencyBuckets,
			}),
			storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
				Namespace: ns, Subsystem: "store", Name: "write_errors_total",
				Help: "Failed batch commits (retried; records are kept in memory meanwhile).",
			}),
			storeRejected: prometheus.NewCounter(prometheus.CounterOpts{
				Namespace: ns, Subsystem: "store", Name: "records_rejected_total",
				Help: "Requests refused with 503 because the record queue stayed full.",
			}),
			storeBytes: prometheus.NewGauge(prometheus.GaugeOpts{
				Namespace: ns, Subsystem: "store", Name: "data_bytes",
				Help: "Bytes of data in the database file (pages in use), measured when max_size is set.",
			}),
			storeEvicted: prometheus.NewCounter(prometheus.CounterOpts{
				Namespace: ns, Subsystem: "store", Name: "records_evicted_total",
				Help: "Records deleted before their retention ran out to keep the database within max_size.",
			}),
		}
		pwMetrics.verdictHits = pwMetrics.cacheHits.WithLabelValues("verdict")
		pwMetrics.verdictMisses = pwMetrics.cacheMisses.WithLabelValues("verdict")
	})
	return pwMetrics
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.requests, m.actions, m.rejected, m.scannerDuration, m.scannerErrors,
		m.screenDuration, m.upstreamSeconds, m.streamTTFB, m.cacheHits, m.cacheMisses,
		m.limitRejected, m.inFlight, m.queueWait,
		m.storeQueueDepth, m.storeBatchSize, m.storeCommit, m.storeErrors, m.storeRejected,
		m.storeBytes, m.storeEvicted,
	}
}

// register adds every collector to reg, tolerating collectors that a
// previous Provision of the same config already registered.
func (m *metrics) register(reg prometheus.Registerer) error {
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

// routeLabels are the bounded label values of one route: all come from the
// operator's configuration, never from a request.
type routeLabels struct {
	provider, project, endpoint string
}

// routeMetrics are the collectors one route touches on every request. A
// lookup by label values hashes every value and takes the vector's lock;
// a route's labels are fixed, so each child is looked up once, on first
// use (a series still appears only once something is counted in it). The
// vectors live for the process, so the children stay valid across reloads.
type routeMetrics struct {
	m      *metrics
	labels routeLabels

	upstream lazyChild[prometheus.Observer]
	ttfb     lazyChild[prometheus.Observer]
	// screen and screened are indexed by directionIndex and outcomeIndex.
	screen   [2]lazyChild[prometheus.Observer]
	screened [2][5]lazyChild[prometheus.Counter]
}

func newRouteMetrics(m *metrics, labels routeLabels) *routeMetrics {
	return &routeMetrics{m: m, labels: labels}
}

// lazyChild is one child of a collector vector, resolved on first use.
type lazyChild[T any] struct {
	once sync.Once
	c    T
}

func (l *lazyChild[T]) get(resolve func() T) T {
	l.once.Do(func() { l.c = resolve() })
	return l.c
}

func directionIndex(d scanner.Direction) int {
	switch d {
	case scanner.Input:
		return 0
	case scanner.Output:
		return 1
	}
	return -1
}

func outcomeIndex(o scanner.Outcome) int {
	switch o {
	case scanner.Passed:
		return 0
	case scanner.Flagged:
		return 1
	case scanner.Modified:
		return 2
	case scanner.Blocked:
		return 3
	case scanner.Error:
		return 4
	}
	return -1
}

// upstreamSeconds is the route's upstream_duration_seconds.
func (rm *routeMetrics) upstreamSeconds() prometheus.Observer {
	return rm.upstream.get(func() prometheus.Observer { return rm.m.upstreamSeconds.WithLabelValues(rm.labels.provider) })
}

// streamTTFB is the route's stream_ttfb_seconds.
func (rm *routeMetrics) streamTTFB() prometheus.Observer {
	return rm.ttfb.get(func() prometheus.Observer { return rm.m.streamTTFB.WithLabelValues(rm.labels.provider) })
}

// screenDuration is screening_duration_seconds for dir.
func (rm *routeMetrics) screenDuration(dir scanner.Direction) prometheus.Observer {
	resolve := func() prometheus.Observer { return rm.m.screenDuration.WithLabelValues(string(dir)) }
	d := directionIndex(dir)
	if d < 0 {
		return resolve()
	}
	return rm.screen[d].get(resolve)
}

// observeResult counts one screening.
func (rm *routeMetrics) observeResult(dir scanner.Direction, res *scanner.Result, took time.Duration) {
	m, labels := rm.m, rm.labels
	resolve := func() prometheus.Counter {
		return m.requests.WithLabelValues(labels.provider, labels.project, labels.endpoint, string(dir), string(res.Outcome))
	}
	if d, o := directionIndex(dir), outcomeIndex(res.Outcome); d >= 0 && o >= 0 {
		rm.screened[d][o].get(resolve).Inc()
	} else {
		resolve().Inc()
	}
	rm.screenDuration(dir).Observe(took.Seconds())
	for i := range res.Scanners {
		sr := &res.Scanners[i]
		switch sr.Outcome {
		case scanner.Blocked, scanner.Modified, scanner.Flagged:
			m.actions.WithLabelValues(sr.ScannerID, labels.provider, labels.project, string(dir), string(sr.Outcome)).Inc()
		case scanner.Error:
			m.scannerErrors.WithLabelValues(sr.ScannerID).Inc()
		}
	}
}

// pipelineObserver feeds the engine's hooks into the collectors.
type pipelineObserver struct{ m *metrics }

func (o pipelineObserver) CacheHit(string)  { o.m.verdictHits.Inc() }
func (o pipelineObserver) CacheMiss(string) { o.m.verdictMisses.Inc() }
func (o pipelineObserver) ScannerDone(id string, d time.Duration, _ scanner.Outcome) {
	o.m.scannerDurationOf(id).Observe(d.Seconds())
}

// scannerDurationOf returns the duration histogram of one scanner. IDs come
// from the configuration, so the map stays as small as the label set.
func (m *metrics) scannerDurationOf(id string) prometheus.Observer {
	if h, ok := m.scannerDurationByID.Load(id); ok {
		return h.(prometheus.Observer)
	}
	h, _ := m.scannerDurationByID.LoadOrStore(id, m.scannerDuration.WithLabelValues(id))
	return h.(prometheus.Observer)
}

// storeObserver feeds the store's hooks into the collectors.
type storeObserver struct {
	m      *metrics
	health *storeHealth
}

func (o storeObserver) QueueDepth(depth int) { o.m.storeQueueDepth.Set(float64(depth)) }
func (o storeObserver) Committed(batch int, d time.Duration, err error) {
	if o.health != nil {
		o.health.committed(err)
	}
	if err != nil {
		o.m.storeErrors.Inc()
		return
	}
	o.m.storeBatchSize.Observe(float64(batch))
	o.m.storeCommit.Observe(d.Seconds())
}
func (o storeObserver) Rejected() { o.m.storeRejected.Inc() }
func (o storeObserver) Size(used int64, evicted int) {
	o.m.storeBytes.Set(float64(used))
	o.m.storeEvicted.Add(float64(evicted))
}

// limitsObserver feeds the provider limiters' hooks into the collectors.
// Provider names come from the operator's configuration: bounded labels.
type limitsObserver struct{ m *metrics }

func (o limitsObserver) InFlight(provider string, n int) {
	o.m.inFlight.WithLabelValues(provider).Set(float64(n))
}
func (o limitsObserver) Rejected(provider, reason string) {
	o.m.limitRejected.WithLabelValues(provider, reason).Inc()
}
func (o limitsObserver) Waited(provider string, d time.Duration) {
	o.m.queueWait.WithLabelValues(provider).Observe(d.Seconds())
}
