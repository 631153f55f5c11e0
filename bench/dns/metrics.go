package main

import (
	"fmt"
	"math"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// histogram is one Prometheus histogram series read from a server's
// /metrics: cumulative counts by upper bound, in seconds.
type histogram struct {
	bounds []float64
	counts []uint64 // counts[i]: observations ≤ bounds[i]
	total  uint64
}

// scrape reads the metric families of the /metrics at url.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return families, nil
}

// histogramOf returns the series of histogram name whose labels include
// every pair of labels (empty when there is none yet).
func histogramOf(families map[string]*dto.MetricFamily, name string, labels map[string]string) histogram {
	for _, m := range families[name].GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		var h histogram
		for _, b := range m.GetHistogram().GetBucket() {
			h.bounds = append(h.bounds, b.GetUpperBound())
			h.counts = append(h.counts, b.GetCumulativeCount())
		}
		h.total = m.GetHistogram().GetSampleCount()
		return h
	}
	return histogram{}
}

// summaryCount returns the number of observations of summary name (the
// first series).
func summaryCount(families map[string]*dto.MetricFamily, name string) uint64 {
	for _, m := range families[name].GetMetric() {
		return m.GetSummary().GetSampleCount()
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// since returns the observations in h that were not yet in earlier.
func (h histogram) since(earlier histogram) histogram {
	out := histogram{bounds: h.bounds, counts: make([]uint64, len(h.counts)), total: h.total - earlier.total}
	for i := range h.counts {
		out.counts[i] = h.counts[i]
		if i < len(earlier.counts) {
			out.counts[i] -= earlier.counts[i]
		}
	}
	return out
}

// quantile returns the upper bound of the bucket that holds quantile q:
// the true value is at most that (+Inf past the last bound; 0 when there
// were no observations).
func (h histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	for i, c := range h.counts {
		if float64(c) >= q*float64(h.total) {
			return time.Duration(h.bounds[i] * float64(time.Second))
		}
	}
	return time.Duration(math.MaxInt64)
}

// bound formats a quantile read from buckets: "≤ 1ms".
func bound(d time.Duration) string {
	if d == time.Duration(math.MaxInt64) {
		return "> last bucket"
	}
	return "≤ " + d.String()
}
