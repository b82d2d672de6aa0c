package namespaceaffinity

import (
	"context"
	"testing"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func TestNamespaceAffinity(t *testing.T) {
	policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType}
	if st := New().PreFilter(context.Background(), framework.NewCycleState(framework.CycleInfo{}), policy); !st.IsSkip() {
		t.Errorf("PreFilter for a CRP = %v, want Skip", st)
	}
	state := framework.NewCycleState(framework.CycleInfo{Namespace: "app"})
	if st := New().PreFilter(context.Background(), state, policy); st != nil {
		t.Errorf("PreFilter for an RP = %v, want Success", st)
	}
	tests := []struct {
		name       string
		namespaces map[string]string
		want       string
	}{
		{name: "namespace reported", namespaces: map[string]string{"app": "w", "other": "w"}},
		{name: "other namespaces only", namespaces: map[string]string{"other": "w"}, want: `namespace "app" does not exist on the cluster`},
		{name: "nothing reported", want: `namespace "app" does not exist on the cluster`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := &clusterv1beta1.MemberCluster{Status: clusterv1beta1.MemberClusterStatus{Namespaces: tt.namespaces}}
			st := New().Filter(context.Background(), state, policy, mc)
			if tt.want == "" && st != nil || tt.want != "" && st.Message() != tt.want {
				t.Errorf("Filter = %v, want %q", st, tt.want)
			}
		})
	}
}
