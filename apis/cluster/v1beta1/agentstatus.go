package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberAgentStatus is the member agent's entry of the status, added when
// missing: the one the syncer reports its heartbeat, joined state and
// health in.
func (st *InternalMemberClusterStatus) MemberAgentStatus() *AgentStatus {
	for i := range st.AgentStatus {
		if st.AgentStatus[i].Type == MemberAgent {
			return &st.AgentStatus[i]
		}
	}
	st.AgentStatus = append(st.AgentStatus, AgentStatus{Type: MemberAgent})
	return &st.AgentStatus[len(st.AgentStatus)-1]
}

// SetJoined records whether the agent applies the cluster's Work, for the
// InternalMemberCluster's generation.
func (a *AgentStatus) SetJoined(joined bool, generation int64) {
	c := metav1.Condition{Type: AgentJoined, Status: metav1.ConditionTrue, ObservedGeneration: generation,
		Reason: ReasonInternalMemberClusterJoined, Message: "the syncer applies this cluster's Work"}
	if !joined {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonInternalMemberClusterLeft, "the syncer stopped applying Work; what it applied stays on the cluster"
	}
	meta.SetStatusCondition(&a.Conditions, c)
}
