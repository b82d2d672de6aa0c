package membercluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

// mirroredConditions are reported by the syncer on the InternalMemberCluster
// and shown on the MemberCluster as they are.
var mirroredConditions = []string{
	clusterv1beta1.ConditionTypeClusterPropertyProviderStarted,
	clusterv1beta1.ConditionTypeClusterPropertyCollectionSucceeded,
	clusterv1beta1.ConditionTypeNamespaceCollectionSucceeded,
}

// syncStatus copies what the syncer reported into the MemberCluster, judges
// the heartbeat, and writes the status only when it changed. It asks to be
// called again when the last heartbeat would expire.
func (r *Reconciler) syncStatus(ctx context.Context, mc *clusterv1beta1.MemberCluster, imc *clusterv1beta1.InternalMemberCluster) (ctrl.Result, error) {
	before := mc.Status.DeepCopy()
	st := &mc.Status
	st.Properties = imc.Status.Properties
	st.ResourceUsage = imc.Status.ResourceUsage
	st.Namespaces = imc.Status.Namespaces
	st.AgentStatus = make([]clusterv1beta1.AgentStatus, 0, len(imc.Status.AgentStatus))
	for _, a := range imc.Status.AgentStatus {
		st.AgentStatus = append(st.AgentStatus, *a.DeepCopy())
	}
	for _, t := range mirroredConditions {
		if c := meta.FindStatusCondition(imc.Status.Conditions, t); c != nil {
			mirrored := *c
			mirrored.ObservedGeneration = mc.Generation
			meta.SetStatusCondition(&st.Conditions, mirrored)
		}
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: clusterv1beta1.ConditionTypeMemberClusterReadyToJoin, Status: metav1.ConditionTrue,
		Reason: clusterv1beta1.ReasonMemberClusterReadyToJoin, ObservedGeneration: mc.Generation,
		Message: fmt.Sprintf("namespace %s, its RBAC and the InternalMemberCluster are ready for the syncer", imc.Namespace),
	})
	meta.SetStatusCondition(&st.Conditions, joinedCondition(mc, agentStatus(st)))
	recheck := r.judgeHealth(mc, before)

	if !equality.Semantic.DeepEqual(before, &mc.Status) {
		if err := r.Client.Status().Update(ctx, mc); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

func agentStatus(st *clusterv1beta1.MemberClusterStatus) *clusterv1beta1.AgentStatus {
	for i := range st.AgentStatus {
		if st.AgentStatus[i].Type == clusterv1beta1.MemberAgent {
			return &st.AgentStatus[i]
		}
	}
	return nil
}

// joinedCondition reflects whether the syncer has confirmed the join.
func joinedCondition(mc *clusterv1beta1.MemberCluster, agent *clusterv1beta1.AgentStatus) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta1.ConditionTypeMemberClusterJoined, ObservedGeneration: mc.Generation}
	var joined *metav1.Condition
	if agent != nil {
		joined = meta.FindStatusCondition(agent.Conditions, clusterv1beta1.AgentJoined)
	}
	switch {
	case joined == nil:
		c.Status, c.Reason = metav1.ConditionUnknown, clusterv1beta1.ReasonMemberClusterJoinStateUnknown
		c.Message = "the member's syncer has not reported yet; run it with `kubectl fleet join " + mc.Name + " --run` or deploy it in the member cluster"
	case joined.Status == metav1.ConditionTrue:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, clusterv1beta1.ReasonMemberClusterJoined, "the member's syncer has joined the fleet"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, clusterv1beta1.ReasonMemberClusterLeft, "the member's syncer has left the fleet"
	}
	return c
}

// missedHeartbeats is how many heartbeat periods a member may miss before it
// is reported unhealthy, whatever the hub's threshold: a healthy member that
// reports every period is never flagged for one late heartbeat.
const missedHeartbeats = 3

// unhealthyAfter is how old a member's last heartbeat may be: the hub's
// threshold, but never less than missedHeartbeats periods of the member.
func (r *Reconciler) unhealthyAfter(mc *clusterv1beta1.MemberCluster) time.Duration {
	period := time.Duration(mc.Spec.HeartbeatPeriodSeconds) * time.Second
	return max(r.UnhealthyThreshold, missedHeartbeats*period)
}

// judgeHealth marks the member agent unhealthy when its heartbeat is older
// than the threshold, and returns when to look again. Unhealthy only keeps
// the member from new placements; what it runs stays. before is the status
// as last written.
func (r *Reconciler) judgeHealth(mc *clusterv1beta1.MemberCluster, before *clusterv1beta1.MemberClusterStatus) time.Duration {
	threshold := r.unhealthyAfter(mc)
	health := metav1.Condition{Type: clusterv1beta1.ConditionTypeMemberClusterHealthy, ObservedGeneration: mc.Generation}
	agent := agentStatus(&mc.Status)
	var recheck time.Duration
	switch {
	case agent == nil || agent.LastReceivedHeartbeat.IsZero():
		health.Status, health.Reason = metav1.ConditionUnknown, clusterv1beta1.ReasonMemberAgentReportedNoStatus
		health.Message = "no heartbeat received from the member's syncer yet"
	default:
		age := r.Clock.Since(agent.LastReceivedHeartbeat.Time)
		if age > threshold {
			health.Status, health.Reason = metav1.ConditionFalse, clusterv1beta1.ReasonMemberAgentHeartbeatLost
			health.Message = fmt.Sprintf("no heartbeat from the member's syncer since %s (threshold %s); it keeps what it runs but gets no new placements; check that the syncer runs and can reach the hub",
				agent.LastReceivedHeartbeat.UTC().Format(time.RFC3339), threshold)
			lost := metav1.Condition{
				Type: clusterv1beta1.AgentHealthy, Status: metav1.ConditionFalse,
				Reason: clusterv1beta1.ReasonMemberAgentHeartbeatLost, Message: health.Message,
			}
			// The agent's conditions are copied afresh from what the syncer
			// last reported (healthy): keep the time the hub first found the
			// heartbeat lost, or every look would be a write and every write
			// another look.
			if prev := lostSince(before); prev != nil {
				lost.LastTransitionTime = prev.LastTransitionTime
			}
			meta.SetStatusCondition(&agent.Conditions, lost)
			break
		}
		recheck = threshold - age + time.Second
		if reported := meta.FindStatusCondition(agent.Conditions, clusterv1beta1.AgentHealthy); reported != nil && reported.Status != metav1.ConditionTrue {
			health.Status, health.Reason, health.Message = reported.Status, clusterv1beta1.ReasonMemberClusterAPIServerUnhealthy, reported.Message
			break
		}
		health.Status, health.Reason = metav1.ConditionTrue, clusterv1beta1.ReasonMemberClusterAPIServerHealthy
		health.Message = "the member's syncer reports regularly"
	}
	meta.SetStatusCondition(&mc.Status.Conditions, health)
	return recheck
}

// lostSince returns the agent's AgentHealthy condition in status if it says
// the heartbeat was lost, else nil.
func lostSince(status *clusterv1beta1.MemberClusterStatus) *metav1.Condition {
	agent := agentStatus(status)
	if agent == nil {
		return nil
	}
	c := meta.FindStatusCondition(agent.Conditions, clusterv1beta1.AgentHealthy)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1beta1.ReasonMemberAgentHeartbeatLost {
		return nil
	}
	return c
}
