package workapplier

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	workApplyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "fleet_work_apply_duration_seconds",
		Help:    "Time to apply one Work to the member cluster and report its status, by member.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"member"})
	workApplyErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleet_work_apply_errors_total",
		Help: "Work applies that failed (a manifest was not applied, or the status could not be written; retried with backoff), by member.",
	}, []string{"member"})
	manifestsApplied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleet_manifests_applied_total",
		Help: "Manifests processed by Work applies, by member and result (applied, or failed).",
	}, []string{"member", "result"})
	watchedKinds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fleet_syncer_watched_kinds",
		Help: "Kinds the syncer watches on the member cluster (those some Work currently places), by member.",
	}, []string{"member"})
)

// watchedObjects counts, when scraped, the objects the syncer holds in its
// member cache, by kind: what placements put on the member, never all the
// member holds of a kind.
var watchedObjects = &watchedObjectsCollector{
	desc: prometheus.NewDesc("fleet_syncer_watched_objects",
		"Objects the syncer watches (and keeps in memory) on the member cluster, by member and kind: those placements manage.",
		[]string{"member", "kind"}, nil),
	kinds: map[string]*Kinds{},
}

func init() {
	ctrlmetrics.Registry.MustRegister(workApplyDuration, workApplyErrors, manifestsApplied, watchedKinds, watchedObjects)
}

type watchedObjectsCollector struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	// kinds are the running syncers' watched kinds by member name; a
	// syncer that starts over replaces its own.
	kinds map[string]*Kinds
}

func (c *watchedObjectsCollector) add(member string, k *Kinds) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds[member] = k
}

func (c *watchedObjectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *watchedObjectsCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for member, k := range c.kinds {
		for kind, n := range k.cached() {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), member, kind)
		}
	}
}

// observeApply records one Work apply that started at start.
func (r *Reconciler) observeApply(start time.Time, ms []*manifest, err error) {
	failed := countFailed(ms, false)
	workApplyDuration.WithLabelValues(r.MemberName).Observe(time.Since(start).Seconds())
	manifestsApplied.WithLabelValues(r.MemberName, "applied").Add(float64(len(ms) - failed))
	if failed > 0 {
		manifestsApplied.WithLabelValues(r.MemberName, "failed").Add(float64(failed))
	}
	if err != nil {
		workApplyErrors.WithLabelValues(r.MemberName).Inc()
	}
}
