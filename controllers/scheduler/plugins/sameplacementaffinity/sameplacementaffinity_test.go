package sameplacementaffinity

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func named(name string) *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func TestSamePlacementAffinity(t *testing.T) {
	state := framework.NewCycleState(framework.CycleInfo{
		ScheduledOrBound: []*clusterv1beta1.MemberCluster{named("bound")},
		Obsolete:         []string{"obsolete"},
	})
	policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType}
	tests := []struct {
		cluster      string
		filtered     bool
		obsoleteWant int32
	}{
		{cluster: "bound", filtered: true},
		{cluster: "obsolete", obsoleteWant: 1},
		{cluster: "fresh"},
	}
	for _, tt := range tests {
		t.Run(tt.cluster, func(t *testing.T) {
			mc := named(tt.cluster)
			if st := New().Filter(context.Background(), state, policy, mc); st.IsClusterUnschedulable() != tt.filtered {
				t.Errorf("Filter = %v, want filtered %v", st, tt.filtered)
			}
			score, st := New().Score(context.Background(), state, policy, mc)
			if st != nil || score != (framework.ClusterScore{ObsoletePlacementAffinityScore: tt.obsoleteWant}) {
				t.Errorf("Score = %+v, %v", score, st)
			}
		})
	}
}
