package localfleet

import (
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Metrics is one scrape of a /metrics endpoint.
type Metrics map[string]*dto.MetricFamily

// Scrape reads the Prometheus metrics served at url.
func Scrape(url string) (Metrics, error) { return ScrapeWith(http.DefaultClient, url) }

// ScrapeWith reads the metrics at url with client, e.g. one with the hub
// admin's credentials for kcp's own /metrics.
func ScrapeWith(client *http.Client, url string) (Metrics, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var parser expfmt.TextParser
	return parser.TextToMetricFamilies(resp.Body)
}

// Sum adds up the series of metric name whose labels include the given
// ones: counter and gauge values, and histogram observation counts. It
// tells whether any series matched.
func (m Metrics) Sum(name string, labels map[string]string) (float64, bool) {
	family, ok := m[name]
	if !ok {
		return 0, false
	}
	var sum float64
	matched := false
	for _, metric := range family.Metric {
		if !hasLabels(metric, labels) {
			continue
		}
		matched = true
		switch {
		case metric.Counter != nil:
			sum += metric.Counter.GetValue()
		case metric.Gauge != nil:
			sum += metric.Gauge.GetValue()
		case metric.Histogram != nil:
			sum += float64(metric.Histogram.GetSampleCount())
		}
	}
	return sum, matched
}

func hasLabels(metric *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range metric.Label {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}
