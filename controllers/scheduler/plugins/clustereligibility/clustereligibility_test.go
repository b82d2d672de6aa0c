package clustereligibility

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func cluster(mutate func(*clusterv1beta1.MemberCluster)) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m"},
		Status: clusterv1beta1.MemberClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1beta1.ConditionTypeMemberClusterHealthy, Status: metav1.ConditionTrue}},
			AgentStatus: []clusterv1beta1.AgentStatus{{
				Type:                  clusterv1beta1.MemberAgent,
				Conditions:            []metav1.Condition{{Type: clusterv1beta1.AgentJoined, Status: metav1.ConditionTrue}},
				LastReceivedHeartbeat: metav1.NewTime(now.Add(-30 * time.Second)),
			}},
		},
	}
	if mutate != nil {
		mutate(mc)
	}
	return mc
}

func TestEligibility(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*clusterv1beta1.MemberCluster)
		want   string // "" means eligible for new picks
		// leaving: existing bindings are taken away too (want is then the
		// Retain message as well); otherwise Retain keeps them.
		leaving bool
	}{
		{name: "eligible"},
		{name: "being deleted", mutate: func(mc *clusterv1beta1.MemberCluster) {
			ts := metav1.NewTime(now)
			mc.DeletionTimestamp = &ts
		}, want: "cluster is leaving the fleet", leaving: true},
		{name: "no member agent status", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.AgentStatus[0].Type = clusterv1beta1.MultiClusterServiceAgent
		}, want: "cluster is not connected to the fleet: the member agent has not reported"},
		{name: "agent left", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.AgentStatus[0].Conditions[0].Status = metav1.ConditionFalse
		}, want: "cluster has left the fleet: its member agent is no longer joined", leaving: true},
		{name: "agent has not reported joined", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.AgentStatus[0].Conditions = nil
		}, want: "cluster is not connected to the fleet: the member agent has not joined"},
		{name: "hub lost the heartbeat", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.Conditions[0].Status, mc.Status.Conditions[0].Reason = metav1.ConditionFalse, clusterv1beta1.ReasonMemberAgentHeartbeatLost
		}, want: "cluster is not connected to the fleet: unhealthy (MemberAgentHeartbeatLost)"},
		{name: "health unknown is eligible", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.Conditions[0].Status = metav1.ConditionUnknown
		}},
		{name: "no health condition is eligible", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.Conditions = nil
		}},
		{name: "heartbeat exactly 5 minutes old", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.AgentStatus[0].LastReceivedHeartbeat = metav1.NewTime(now.Add(-HeartbeatTimeout))
		}},
		{name: "heartbeat too old", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.AgentStatus[0].LastReceivedHeartbeat = metav1.NewTime(now.Add(-HeartbeatTimeout - time.Second))
		}, want: "cluster is not connected to the fleet: no heartbeat from the member agent within 5m0s"},
		{name: "no heartbeat yet", mutate: func(mc *clusterv1beta1.MemberCluster) {
			mc.Status.AgentStatus[0].LastReceivedHeartbeat = metav1.Time{}
		}, want: "cluster is not connected to the fleet: no heartbeat from the member agent within 5m0s"},
	}
	state := framework.NewCycleState(framework.CycleInfo{Now: now})
	policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := cluster(tt.mutate)
			wantRetain := ""
			if tt.leaving {
				wantRetain = tt.want
			}
			for stage, c := range map[string]struct {
				got  *framework.Status
				want string
			}{
				"Filter": {New().Filter(context.Background(), state, policy, mc), tt.want},
				"Retain": {New().Retain(context.Background(), state, mc), wantRetain},
			} {
				if c.want == "" && c.got != nil || c.want != "" && (!c.got.IsClusterUnschedulable() || c.got.Message() != c.want) {
					t.Errorf("%s = %v, want %q", stage, c.got, c.want)
				}
			}
		})
	}
}
