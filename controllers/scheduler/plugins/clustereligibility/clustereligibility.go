// Package clustereligibility keeps new placements off clusters that are not
// connected to the fleet (being deleted, not joined, unhealthy, or silent),
// and takes existing placements away only from clusters that leave.
//
// Health is not membership: a member whose heartbeats stop keeps everything
// it was given, since losing a connection must never restart a team's
// workloads. It only stops being picked until it reports again.
package clustereligibility

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "ClusterEligibility"

// HeartbeatTimeout is how old the member agent's last heartbeat may be, as
// in KubeFleet's eligibility checker.
const HeartbeatTimeout = 5 * time.Minute

// Plugin filters ineligible clusters and takes bindings away from leaving ones.
type Plugin struct{}

var (
	_ framework.FilterPlugin = Plugin{}
	_ framework.RetainPlugin = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// Filter rejects ineligible clusters.
func (Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	return check(cluster, state.Now())
}

// Retain unschedules bindings only on clusters that are leaving the fleet:
// being deleted, or whose syncer has confirmed that it left. An unhealthy or
// silent cluster keeps its bindings (as in KubeFleet).
func (Plugin) Retain(_ context.Context, _ *framework.CycleState, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	return leaving(cluster)
}

func leaving(mc *clusterv1beta1.MemberCluster) *framework.Status {
	if mc.DeletionTimestamp != nil {
		return framework.Unschedulable("cluster is leaving the fleet")
	}
	if agent := mc.Status.GetAgentStatus(clusterv1beta1.MemberAgent); agent != nil {
		if joined := meta.FindStatusCondition(agent.Conditions, clusterv1beta1.AgentJoined); joined != nil && joined.Status == metav1.ConditionFalse {
			return framework.Unschedulable("cluster has left the fleet: its member agent is no longer joined")
		}
	}
	return nil
}

// check returns nil if the cluster is eligible at now.
func check(mc *clusterv1beta1.MemberCluster, now time.Time) *framework.Status {
	if st := leaving(mc); st != nil {
		return st
	}
	agent := mc.Status.GetAgentStatus(clusterv1beta1.MemberAgent)
	if agent == nil {
		return framework.Unschedulable("cluster is not connected to the fleet: the member agent has not reported")
	}
	if !meta.IsStatusConditionTrue(agent.Conditions, clusterv1beta1.AgentJoined) {
		return framework.Unschedulable("cluster is not connected to the fleet: the member agent has not joined")
	}
	if healthy := meta.FindStatusCondition(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy); healthy != nil && healthy.Status == metav1.ConditionFalse {
		return framework.Unschedulable(fmt.Sprintf("cluster is not connected to the fleet: unhealthy (%s)", healthy.Reason))
	}
	if last := agent.LastReceivedHeartbeat.Time; now.Sub(last) > HeartbeatTimeout {
		return framework.Unschedulable(fmt.Sprintf("cluster is not connected to the fleet: no heartbeat from the member agent within %s", HeartbeatTimeout))
	}
	return nil
}
