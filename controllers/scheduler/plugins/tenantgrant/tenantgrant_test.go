package tenantgrant

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func TestTenantGrant(t *testing.T) {
	state := framework.NewCycleState(framework.CycleInfo{
		Granted: func(mc *clusterv1beta1.MemberCluster) bool { return mc.Labels["tenant"] == "a" },
	})
	policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType}
	tests := []struct {
		name, tenant, want string
	}{
		{name: "granted", tenant: "a"},
		{name: "not granted", tenant: "b", want: `cluster "not granted" is not granted to this placement's workspace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: tt.name, Labels: map[string]string{"tenant": tt.tenant}}}
			for stage, st := range map[string]*framework.Status{
				"Filter": New().Filter(context.Background(), state, policy, mc),
				"Retain": New().Retain(context.Background(), state, mc),
			} {
				if tt.want == "" && st != nil || tt.want != "" && (!st.IsClusterUnschedulable() || st.Message() != tt.want) {
					t.Errorf("%s = %v, want %q", stage, st, tt.want)
				}
			}
		})
	}
}
