package replication

import "github.com/prometheus/client_golang/prometheus"

// Collector returns a Prometheus collector of every peer's replication
// state, read at scrape time from the peers themselves (Status): one lock
// per peer, no copy of the state kept elsewhere. This server's own URL,
// when it is in the peer list, is left out.
func (rp *Replicator) Collector() prometheus.Collector { return &peerCollector{rp: rp} }

var (
	peerUpDesc = prometheus.NewDesc("heureka_peer_up",
		"1 if the replication peer answered the last call (a batch, the start-up copy or an anti-entropy digest), else 0; 0 until it is first called.", []string{"peer"}, nil)
	peerQueueDesc = prometheus.NewDesc("heureka_replication_queue_length",
		"Writes and heartbeats queued for the replication peer.", []string{"peer"}, nil)
	peerDroppedDesc = prometheus.NewDesc("heureka_replication_dropped_total",
		"Queued writes discarded for a full resynchronisation of the peer (queue overflow, refused batch, long outage).",
		[]string{"peer"}, nil)
)

type peerCollector struct{ rp *Replicator }

func (c *peerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- peerUpDesc
	ch <- peerQueueDesc
	ch <- peerDroppedDesc
}

func (c *peerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.rp.peers {
		st := p.status()
		if st.Self {
			continue
		}
		up := 0.0
		if st.Reachable {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(peerUpDesc, prometheus.GaugeValue, up, st.URL)
		ch <- prometheus.MustNewConstMetric(peerQueueDesc, prometheus.GaugeValue, float64(st.Queued), st.URL)
		ch <- prometheus.MustNewConstMetric(peerDroppedDesc, prometheus.CounterValue, float64(st.Dropped), st.URL)
	}
}
