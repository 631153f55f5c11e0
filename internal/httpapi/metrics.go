package httpapi

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heureka-project/heureka/registry"
)

// metrics owns a Prometheus registry of its own (never the global one), so
// that several Servers can live in one process, as they do in tests.
type metrics struct {
	registry *prometheus.Registry
	duration *prometheus.HistogramVec
	handler  http.Handler

	// observers keeps each label set's histogram, copied on write: a
	// request reads it without a lock or an allocation, where
	// WithLabelValues checks and hashes its three labels and takes a lock,
	// about 1% of a renewal. New label sets are rare (routes × methods ×
	// codes).
	observers atomic.Pointer[map[obsKey]prometheus.Observer]
	addMu     sync.Mutex
}

// obsKey is one label set of the request histogram.
type obsKey struct {
	route, method string
	code          int
}

// newMetrics registers the request histogram, the registry's statistics,
// the HDFS and role views of the registry, the number of open streams (watchers), the
// Go runtime's and process's collectors, and extra (other owners' state).
func newMetrics(reg *registry.Registry, watchers func() int, extra []prometheus.Collector) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "heureka_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by route pattern, method and status code.",
			// Cached reads take microseconds; a full registry encode of a
			// large registry or a slow client can take a second.
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method", "code"}),
	}
	m.registry.MustRegister(
		m.duration,
		newStatsCollector(reg),
		newHDFSCollector(reg),
		newRoleCollector(reg),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "heureka_watchers",
			Help: "Open watch and event streams.",
		}, func() float64 { return float64(watchers()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.registry.MustRegister(extra...)
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

// observe records one request. route is a pattern from the route table or
// "unmatched", and unusual methods are folded into "OTHER", so that no
// client can grow the label set.
func (m *metrics) observe(route, method string, code int, d time.Duration) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		method = "OTHER"
	}
	m.observer(obsKey{route, method, code}).Observe(d.Seconds())
}

func (m *metrics) observer(k obsKey) prometheus.Observer {
	if all := m.observers.Load(); all != nil {
		if o, ok := (*all)[k]; ok {
			return o
		}
	}
	m.addMu.Lock()
	defer m.addMu.Unlock()
	old := m.observers.Load()
	if old != nil {
		if o, ok := (*old)[k]; ok {
			return o
		}
	}
	all := make(map[obsKey]prometheus.Observer, 1)
	if old != nil {
		all = maps.Clone(*old)
	}
	o := m.duration.WithLabelValues(k.route, k.method, strconv.Itoa(k.code))
	all[k] = o
	m.observers.Store(&all)
	return o
}

// statsCollector turns registry.Stats into metrics at scrape time.
type statsCollector struct {
	reg *registry.Registry

	instances        *prometheus.Desc
	registrations    *prometheus.Desc
	renewals         *prometheus.Desc
	cancels          *prometheus.Desc
	evictions        *prometheus.Desc
	selfPreservation *prometheus.Desc
	renewsLastMin    *prometheus.Desc
	renewsThreshold  *prometheus.Desc
	renewsExpected   *prometheus.Desc
}

func newStatsCollector(reg *registry.Registry) *statsCollector {
	return &statsCollector{
		reg: reg,
		instances: prometheus.NewDesc("heureka_instances",
			"Registered instances by application and status.", []string{"app", "status"}, nil),
		registrations: prometheus.NewDesc("heureka_registrations_total",
			"Registrations accepted since start.", nil, nil),
		renewals: prometheus.NewDesc("heureka_renewals_total",
			"Lease renewals (heartbeats) accepted since start.", nil, nil),
		cancels: prometheus.NewDesc("heureka_cancels_total",
			"Instances cancelled by their clients since start.", nil, nil),
		evictions: prometheus.NewDesc("heureka_evictions_total",
			"Instances evicted for expired leases since start.", nil, nil),
		selfPreservation: prometheus.NewDesc("heureka_self_preservation",
			"1 while eviction is suspended by self-preservation, else 0.", nil, nil),
		renewsLastMin: prometheus.NewDesc("heureka_renews_last_minute",
			"Renewals counted in the last minute.", nil, nil),
		renewsThreshold: prometheus.NewDesc("heureka_renews_threshold",
			"Renewals per minute below which self-preservation engages.", nil, nil),
		renewsExpected: prometheus.NewDesc("heureka_renews_expected_per_minute",
			"Renewals per minute the registered leases promise (each lease's renewal interval).", nil, nil),
	}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.instances
	ch <- c.registrations
	ch <- c.renewals
	ch <- c.cancels
	ch <- c.evictions
	ch <- c.selfPreservation
	ch <- c.renewsLastMin
	ch <- c.renewsThreshold
	ch <- c.renewsExpected
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.reg.Stats()
	for app, counts := range st.Instances {
		for status, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.instances, prometheus.GaugeValue, float64(n), app, string(status))
		}
	}
	ch <- prometheus.MustNewConstMetric(c.registrations, prometheus.CounterValue, float64(st.Registrations))
	ch <- prometheus.MustNewConstMetric(c.renewals, prometheus.CounterValue, float64(st.Renewals))
	ch <- prometheus.MustNewConstMetric(c.cancels, prometheus.CounterValue, float64(st.Cancels))
	ch <- prometheus.MustNewConstMetric(c.evictions, prometheus.CounterValue, float64(st.Evictions))
	sp := 0.0
	if st.SelfPreservation {
		sp = 1
	}
	ch <- prometheus.MustNewConstMetric(c.selfPreservation, prometheus.GaugeValue, sp)
	ch <- prometheus.MustNewConstMetric(c.renewsLastMin, prometheus.GaugeValue, float64(st.RenewsLastMin))
	ch <- prometheus.MustNewConstMetric(c.renewsThreshold, prometheus.GaugeValue, float64(st.RenewsThreshold))
	ch <- prometheus.MustNewConstMetric(c.renewsExpected, prometheus.GaugeValue, st.ExpectedRenewsPerMinute)
}
