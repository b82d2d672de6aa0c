package placement

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

const crpKind = "ClusterResourcePlacement"

// rolloutStatus is a status at resource index with the Available condition
// and, per cluster, the index it runs.
func rolloutStatus(index string, available metav1.ConditionStatus, gen int64, clusterIndexes ...string) *placementv1beta1.PlacementStatus {
	st := &placementv1beta1.PlacementStatus{ObservedResourceIndex: index, Conditions: []metav1.Condition{{
		Type: crpKind + "Available", Status: available, ObservedGeneration: gen,
	}}}
	for i, ci := range clusterIndexes {
		st.PerClusterPlacementStatuses = append(st.PerClusterPlacementStatuses,
			placementv1beta1.PerClusterPlacementStatus{ClusterName: "member-" + string(rune('1'+i)), ObservedResourceIndex: ci})
	}
	return st
}

// observed returns how many rollouts were timed and their total seconds.
func observed(t *testing.T) (uint64, float64) {
	m := &dto.Metric{}
	if err := rolloutDuration.WithLabelValues(crpKind).(prometheus.Histogram).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()
}

func TestRolloutClock(t *testing.T) {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "app", Generation: 1}}
	t0 := time.Unix(1000, 0)
	var c rolloutClock
	n0, sum0 := observed(t)
	expect := func(step string, n uint64, sum float64) {
		t.Helper()
		gotN, gotSum := observed(t)
		if gotN-n0 != n || gotSum-sum0 != sum {
			t.Fatalf("%s: %d rollouts timed, %.1fs in all; want %d, %.1fs", step, gotN-n0, gotSum-sum0, n, sum)
		}
	}

	c.observe("ws/app", p, rolloutStatus("0", metav1.ConditionUnknown, 1, "0", "0"), t0)
	c.observe("ws/app", p, rolloutStatus("0", metav1.ConditionUnknown, 1, "0", "0"), t0.Add(time.Second))
	c.observe("ws/app", p, rolloutStatus("0", metav1.ConditionTrue, 1, "0", "0"), t0.Add(3*time.Second))
	expect("created, then Available", 1, 3)

	c.observe("ws/app", p, rolloutStatus("0", metav1.ConditionTrue, 1, "0", "0"), t0.Add(10*time.Second))
	expect("Available again without a change", 1, 3)

	// The resources changed: Available still holds for the old index on a
	// cluster, so the rollout is not done.
	c.observe("ws/app", p, rolloutStatus("1", metav1.ConditionTrue, 1, "1", "0"), t0.Add(20*time.Second))
	c.observe("ws/app", p, rolloutStatus("1", metav1.ConditionTrue, 1, "1", "1"), t0.Add(22*time.Second))
	expect("resource change rolled out", 2, 5)

	// A spec change restarts the clock even if the previous one never
	// finished; generation 3 is first seen at 31s (its Available is still
	// generation 2's).
	p.Generation = 2
	c.observe("ws/app", p, rolloutStatus("1", metav1.ConditionUnknown, 2, "1", "1"), t0.Add(30*time.Second))
	p.Generation = 3
	c.observe("ws/app", p, rolloutStatus("1", metav1.ConditionTrue, 2, "1", "1"), t0.Add(31*time.Second))
	c.observe("ws/app", p, rolloutStatus("1", metav1.ConditionUnknown, 3, "1", "1"), t0.Add(32*time.Second))
	c.observe("ws/app", p, rolloutStatus("1", metav1.ConditionTrue, 3, "1", "1"), t0.Add(36*time.Second))
	expect("generation 3 rolled out", 3, 10)

	c.observe("ws/other", p, rolloutStatus("0", metav1.ConditionUnknown, 3), t0)
	c.forget("ws/other")
	if len(c.started) != 0 {
		t.Fatalf("placements still timed: %v", c.started)
	}
}
