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

	// The children of queries and seconds, made when first used, so that
	// counting a query looks no labels up.
	byTypeRcode [len(qtypes) + 2][rcodeSlots]atomic.Pointer[prometheus.Counter]
	udpSeconds  atomic.Pointer[prometheus.Observer]
}

// rcodeSlots indexes the rcodes by value, the last slot standing for every
// rcode past it.
const rcodeSlots = dns.RcodeBadCookie + 2

func newMetrics() *metrics {
	return &metrics{
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heureka_dns_queries_total",
			Help: "DNS queries answered, by query type and response code.",
		}, []string{"qtype", "rcode"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "heureka_dns_query_seconds",
			Help: "Time from a DNS query's arrival (over UDP on Linux, the kernel's receipt; else its read) to its answer sent, by transport.",
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

// qtypes are the query types counted under their own label: those heureka
// answers and a few a client is likely to ask; any other is "other", and a
// message without one question "none".
var qtypes = [...]uint16{dns.TypeA, dns.TypeAAAA, dns.TypeSRV, dns.TypeTXT, dns.TypePTR, dns.TypeSOA, dns.TypeNS,
	dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeHTTPS, dns.TypeCNAME, dns.TypeMX}

// observation is what is counted of one query answered.
type observation struct {
	qtype     uint16
	question  bool // the query had one question (of qtype)
	rcode     int
	truncated bool
}

// observeMsg is the observation of req answered with resp.
func observeMsg(req, resp *dns.Msg) observation {
	o := observation{rcode: resp.Rcode, truncated: resp.Truncated}
	if len(req.Question) == 1 {
		o.qtype, o.question = req.Question[0].Qtype, true
	}
	return o
}

func (m *metrics) observe(o observation, transport string, took time.Duration) {
	m.counter(o).Inc()
	m.histogram(transport).Observe(took.Seconds())
	if o.truncated {
		m.truncated.Inc()
	}
	m.total.Add(1)
}

// counter returns the query counter of o's type and rcode.
func (m *metrics) counter(o observation) prometheus.Counter {
	t := len(qtypes) + 1 // none
	if o.question {
		t = len(qtypes) // other
		for i, q := range qtypes {
			if q == o.qtype {
				t = i
			}
		}
	}
	rc := min(max(o.rcode, 0), rcodeSlots-1)
	slot := &m.byTypeRcode[t][rc]
	if c := slot.Load(); c != nil {
		return *c
	}
	qt := "none"
	switch {
	case t < len(qtypes):
		qt = dns.TypeToString[qtypes[t]]
	case t == len(qtypes):
		qt = "other"
	}
	rcode, ok := dns.RcodeToString[o.rcode]
	if !ok {
		rcode = "other"
	}
	c := m.queries.WithLabelValues(qt, rcode)
	slot.Store(&c)
	return c
}

// histogram returns the latency histogram of a transport.
func (m *metrics) histogram(transport string) prometheus.Observer {
	if transport != "udp" {
		return m.seconds.WithLabelValues(transport)
	}
	if h := m.udpSeconds.Load(); h != nil {
		return *h
	}
	h := m.seconds.WithLabelValues(transport)
	m.udpSeconds.Store(&h)
	return h
}
