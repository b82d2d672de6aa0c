package placement

import (
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// scheduledSnapshot is a policy snapshot the scheduler has finished for
// generation 1 of a placement wanting n clusters (0: PickAll).
func scheduledSnapshot(n int, fulfilled bool) *placementv1beta1.ClusterSchedulingPolicySnapshot {
	s := &placementv1beta1.ClusterSchedulingPolicySnapshot{}
	s.SetAnnotations(map[string]string{placementv1beta1.CRPGenerationAnnotation: "1"})
	if n > 0 {
		s.Annotations[placementv1beta1.NumberOfClustersAnnotation] = strconv.Itoa(n)
	}
	s.Status.ObservedCRPGeneration = 1
	c := metav1.Condition{Type: string(placementv1beta1.PerClusterScheduledConditionType), Status: metav1.ConditionTrue, Reason: placementv1beta1.SchedulingPolicyFulfilledReason}
	if !fulfilled {
		c.Status, c.Reason = metav1.ConditionFalse, placementv1beta1.SchedulingPolicyUnfulfilledReason
	}
	s.Status.Conditions = []metav1.Condition{c}
	return s
}

// availableBinding has rolled out everything to cluster.
func availableBinding(cluster string) *placementv1beta1.ClusterResourceBinding {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Generation = 1
	b.Spec.TargetCluster = cluster
	b.Spec.State = placementv1beta1.BindingStateBound
	for _, t := range placementv1beta1.ApplyRolloutConditions {
		b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: string(t.PerCluster), Status: metav1.ConditionTrue, Reason: "Done", ObservedGeneration: 1})
	}
	return b
}

func atSnapshot(b *placementv1beta1.ClusterResourceBinding, snapshot string) *placementv1beta1.ClusterResourceBinding {
	b.Spec.ResourceSnapshotName = snapshot
	return b
}

func conditionSummary(conds []metav1.Condition) map[string]string {
	out := map[string]string{}
	for _, c := range conds {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestBuildStatusConditions(t *testing.T) {
	rollout := func(scheduled string) map[string]string {
		return map[string]string{
			"ClusterResourcePlacementScheduled":        scheduled,
			"ClusterResourcePlacementRolloutStarted":   "True/" + placementv1beta1.RolloutStartedReason,
			"ClusterResourcePlacementOverridden":       "True/" + placementv1beta1.OverrideNotSpecifiedReason,
			"ClusterResourcePlacementWorkSynchronized": "True/" + placementv1beta1.WorkSynchronizedReason,
			"ClusterResourcePlacementApplied":          "True/" + placementv1beta1.ApplySucceededReason,
			"ClusterResourcePlacementAvailable":        "True/" + placementv1beta1.AvailableReason,
		}
	}
	fulfilled := "True/" + placementv1beta1.SchedulingPolicyFulfilledReason
	unfulfilled := "False/" + placementv1beta1.SchedulingPolicyUnfulfilledReason
	for _, tc := range []struct {
		name         string
		snapshot     *placementv1beta1.ClusterSchedulingPolicySnapshot
		bindings     []placementv1beta1.BindingObj
		want         map[string]string
		wantClusters int
	}{
		{"no cluster picked: only Scheduled", scheduledSnapshot(0, true), nil,
			map[string]string{"ClusterResourcePlacementScheduled": fulfilled}, 0},
		{"PickN with no eligible cluster: Scheduled False and an empty slot each", scheduledSnapshot(2, false), nil,
			map[string]string{"ClusterResourcePlacementScheduled": unfulfilled}, 2},
		{"PickN unfulfilled: the rollout of the clusters picked shows", scheduledSnapshot(3, false),
			[]placementv1beta1.BindingObj{availableBinding("member-1"), availableBinding("member-2")}, rollout(unfulfilled), 3},
		{"all picked", scheduledSnapshot(2, true),
			[]placementv1beta1.BindingObj{availableBinding("member-1"), availableBinding("member-2")}, rollout(fulfilled), 2},
		{"a cluster still at older resources has not started the rollout", scheduledSnapshot(2, true),
			[]placementv1beta1.BindingObj{availableBinding("member-1"), atSnapshot(availableBinding("member-2"), "crp-0-snapshot")},
			map[string]string{
				"ClusterResourcePlacementScheduled":      fulfilled,
				"ClusterResourcePlacementRolloutStarted": "False/" + placementv1beta1.RolloutNotStartedYetReason,
			}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &placementv1beta1.ClusterResourcePlacement{}
			p.Name, p.Generation = "crp", 1
			// Conditions left from an earlier rollout do not survive.
			p.Status.Conditions = []metav1.Condition{{Type: "ClusterResourcePlacementAvailable", Status: metav1.ConditionTrue, Reason: "ResourceAvailable"}}
			snap := &placementv1beta1.ClusterResourceSnapshot{}
			snap.Name = "crp-1-snapshot"
			snap.SetLabels(map[string]string{placementv1beta1.ResourceIndexLabel: "1"})
			st := buildStatus(p, nil, snap, tc.snapshot, tc.bindings)
			got := conditionSummary(st.Conditions)
			if len(got) != len(tc.want) {
				t.Errorf("conditions %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s is %s, want %s", k, got[k], v)
				}
			}
			if len(st.PerClusterPlacementStatuses) != tc.wantClusters {
				t.Errorf("%d per-cluster statuses, want %d", len(st.PerClusterPlacementStatuses), tc.wantClusters)
			}
			if st.ObservedResourceIndex != "1" || meta.FindStatusCondition(st.Conditions, "ClusterResourcePlacementScheduled").ObservedGeneration != 1 {
				t.Errorf("observedResourceIndex %q, Scheduled not of generation 1", st.ObservedResourceIndex)
			}
		})
	}
}
