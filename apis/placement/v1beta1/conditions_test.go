package v1beta1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every placement condition is named the way KubeFleet names it at both
// levels, and has the three reasons of its aggregate.
func TestPlacementConditionsAreComplete(t *testing.T) {
	crp := &ClusterResourcePlacement{}
	rp := &ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "app"}}
	for _, c := range append([]PlacementCondition{ScheduledCondition}, append(ApplyRolloutConditions, DiffReportedCondition)...) {
		if got, want := c.TypeFor(crp), "ClusterResourcePlacement"+string(c.PerCluster); got != want {
			t.Errorf("%s on a ClusterResourcePlacement is %q, want %q", c.PerCluster, got, want)
		}
		if got, want := c.TypeFor(rp), "ResourcePlacement"+string(c.PerCluster); got != want {
			t.Errorf("%s on a ResourcePlacement is %q, want %q", c.PerCluster, got, want)
		}
		if c.TrueReason == "" || c.FalseReason == "" || c.UnknownReason == "" {
			t.Errorf("%s lacks a reason: %+v", c.PerCluster, c)
		}
		if c != ScheduledCondition && c.EventReason == "" {
			t.Errorf("%s records no event when it turns True", c.PerCluster)
		}
	}
	if PlacementKindOf(crp) != ClusterResourcePlacementKind || PlacementKindOf(rp) != ResourcePlacementKind {
		t.Errorf("kinds: %s, %s", PlacementKindOf(crp), PlacementKindOf(rp))
	}
}
