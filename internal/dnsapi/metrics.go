package dnsapi

import (
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the DNS server's counters, exported at GET /metrics.
type metrics struct {
	queries   *prometheus.CounterVec   // by query type and rcode
	seconds   *prometheus.HistogramVec // by transport
	truncated prometheus.Counter
	limited   *prometheus.CounterVec // by action: slip, drop
	malformed prometheus.Counter
	total     atomic.Uint64 // for Status
}

func newMetrics() *metrics {
	return &metrics{
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heureka_dns_queries_total",
			Help: "DNS queries answered, by query type and response code.",
		}, []string{"qtype", "rcode"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "heureka_dns_query_seconds",
			Help: "Time to make and send a DNS answer, by transport.",
			// An answer from the snapshot takes microseconds; a large
			// TCP answer or a rebuilt application view, milliseconds.
			Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3},
		}, []string{"transport"}),
		truncated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "heureka_dns_truncated_total",
			Help: "DNS answers sent with the TC flag because they did not fit the client's size.",
		}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heureka_dns_rate_limited_total",
			Help: "UDP queries over their source's rate: slip (an empty truncated reply) or drop.",
		}, []string{"action"}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "heureka_dns_malformed_total",
			Help: "DNS messages that could not be read (answered FORMERR when the header could be).",
		}),
	}
}

// Describe and Collect make metrics one prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.queries.Describe(ch)
	m.seconds.Describe(ch)
	m.truncated.Describe(ch)
	m.limited.Describe(ch)
	m.malformed.Describe(ch)
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.queries.Collect(ch)
	m.seconds.Collect(ch)
	m.truncated.Collect(ch)
	m.limited.Collect(ch)
	m.malformed.Collect(ch)
}

// qtypeLabel bounds the query-type label to the types heureka answers and
// a few a client is likely to ask; any other is "other".
func qtypeLabel(t uint16) string {
	switch t {
	case dns.TypeA, dns.TypeAAAA, dns.TypeSRV, dns.TypeTXT, dns.TypePTR, dns.TypeSOA, dns.TypeNS,
		dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeHTTPS, dns.TypeCNAME, dns.TypeMX:
		return dns.TypeToString[t]
	}
	return "other"
}

func (m *metrics) observe(req, resp *dns.Msg, transport string, took time.Duration) {
	qt := "none"
	if len(req.Question) == 1 {
		qt = qtypeLabel(req.Question[0].Qtype)
	}
	rc, ok := dns.RcodeToString[resp.Rcode]
	if !ok {
		rc = "other"
	}
	m.queries.WithLabelValues(qt, rc).Inc()
	m.seconds.WithLabelValues(transport).Observe(took.Seconds())
	if resp.Truncated {
		m.truncated.Inc()
	}
	m.total.Add(1)
}
