package caddymodule

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promptwall/promptwall/store"
)

// Store operations timed on the request paths: bounded label values.
const (
	opLookupToken = "lookup_token"
	opTouchToken  = "touch_token"
	opGetUser     = "get_user"
	opGetOrg      = "get_org"
	opListPrompts = "list_prompts"
	opGetPrompt   = "get_prompt"
	opSync        = "sync"
)

// storeOpMetrics are the store's collectors besides the writer's (metrics.go):
// latency and failures of the calls requests make, and whether the store's
// server is reachable. Built once per process.
type storeOpMetrics struct {
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	up       prometheus.GaugeFunc

	mu      sync.Mutex
	healths map[*storeHealth]struct{}
}

var (
	storeOpMetricsOnce sync.Once
	storeOpMetricsVal  *storeOpMetrics
)

func getStoreOpMetrics() *storeOpMetrics {
	storeOpMetricsOnce.Do(func() {
		ns, sub := metricsNamespace, "store"
		m := &storeOpMetrics{
			duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: ns, Subsystem: sub, Name: "operation_duration_seconds",
				Help:    "Time of the store calls requests make (token checks, record reads, syncs), by operation.",
				Buckets: latencyBuckets,
			}, []string{"op"}),
			errors: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: ns, Subsystem: sub, Name: "operation_errors_total",
				Help: "Failed store calls, by operation (not found is not a failure).",
			}, []string{"op"}),
			healths: map[*storeHealth]struct{}{},
		}
		m.up = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "up",
			Help: "1 while the store accepts records, 0 while its server is unreachable (requests are refused with 503).",
		}, m.upValue)
		storeOpMetricsVal = m
	})
	return storeOpMetricsVal
}

func (m *storeOpMetrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.duration, m.errors, m.up} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

// start times one call; the returned func records it.
func (m *storeOpMetrics) start(op string) func() {
	t := time.Now()
	return func() { m.duration.WithLabelValues(op).Observe(time.Since(t).Seconds()) }
}

// failed counts err unless it is nil or a record that does not exist, and
// returns it.
func (m *storeOpMetrics) failed(op string, err error) error {
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		m.errors.WithLabelValues(op).Inc()
	}
	return err
}

func (m *storeOpMetrics) watch(h *storeHealth) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.healths[h] = struct{}{}
}

func (m *storeOpMetrics) unwatch(h *storeHealth) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.healths, h)
}

func (m *storeOpMetrics) upValue() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h := range m.healths {
		if h.down.Load() {
			return 0
		}
	}
	return 1
}
