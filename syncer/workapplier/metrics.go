package workapplier

import (
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

func init() {
	ctrlmetrics.Registry.MustRegister(workApplyDuration, workApplyErrors, manifestsApplied, watchedKinds)
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
