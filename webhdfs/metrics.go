package webhdfs

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the gateway's Prometheus series. Their names are a
// contract: alert rules are written on them.
type metrics struct {
	requests          *prometheus.CounterVec
	duration          *prometheus.HistogramVec
	failovers         prometheus.Counter
	standbyRetries    prometheus.Counter
	excluded          prometheus.Counter
	rejectedRedirects *prometheus.CounterVec
	unknownRedirects  prometheus.Counter
	namenodeKnown     prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heureka_gateway_requests_total",
			Help: "WebHDFS requests answered, by operation (upper case; \"invalid\" when none could be read) and outcome: ok, client_error (the NameNode's 4xx), rejected (refused by the gateway), standby, no_namenode, namenode_unreachable, timeout, upstream_error (the NameNode's 5xx), no_datanode.",
		}, []string{"op", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "heureka_gateway_request_duration_seconds",
			Help:    "Time to answer a WebHDFS request, retries included, by operation.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"op"}),
		failovers: counter("heureka_gateway_failovers_total",
			"Times the gateway started sending to a different active NameNode."),
		standbyRetries: counter("heureka_gateway_standby_retries_total",
			"Requests retried on a newly resolved active NameNode after a StandbyException or a refused connection."),
		excluded: counter("heureka_gateway_datanodes_excluded_total",
			"DataNodes added to excludedatanodes on forwarded requests (a node excluded from ten requests counts ten)."),
		rejectedRedirects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heureka_gateway_redirects_rejected_total",
			Help: "NameNode redirects to a DataNode the gateway would not send a client to, asked again without it, by reason: not_up, draining, full, penalized, probe_failed.",
		}, []string{"reason"}),
		unknownRedirects: counter("heureka_gateway_redirects_unknown_total",
			"NameNode redirects to a DataNode the registry does not know, passed on unchecked."),
		namenodeKnown: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "heureka_gateway_active_namenode_known",
			Help: "1 once the registry has named an active NameNode to the gateway.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.duration, m.failovers, m.standbyRetries,
			m.excluded, m.rejectedRedirects, m.unknownRedirects, m.namenodeKnown} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *metrics) request(op, outcome string, started time.Time) {
	m.requests.WithLabelValues(op, outcome).Inc()
	m.duration.WithLabelValues(op).Observe(time.Since(started).Seconds())
}
