package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	schedulingAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleet_scheduling_attempts_total",
		Help: "Scheduling cycles run, by result: scheduled (decisions written) or error (retried).",
	}, []string{"result"})
	schedulingDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleet_scheduling_duration_seconds",
		Help:    "Time of one scheduling cycle: reading the fleet, deciding, and writing bindings and decisions.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(schedulingAttempts, schedulingDuration)
}

// observeCycle records one scheduling cycle that started at start.
func observeCycle(start time.Time, err error) {
	result := "scheduled"
	if err != nil {
		result = "error"
	}
	schedulingAttempts.WithLabelValues(result).Inc()
	schedulingDuration.Observe(time.Since(start).Seconds())
}
