package board

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

func TestCellOfReadsWhereTheRolloutStopped(t *testing.T) {
	T, F, U := metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
	cases := []struct {
		name                    string
		conds                   []metav1.Condition
		failed, drifted, diffed int
		want                    Cell
	}{
		{name: "nothing yet", want: Cell{State: StateScheduled, Reason: "waiting for the scheduler"}},
		{name: "waiting for its rollout", conds: []metav1.Condition{cond("Scheduled", T, "Scheduled", ""), cond("RolloutStarted", U, "RolloutNotStartedYet", "an update run rolls it out")},
			want: Cell{State: StateRollingOut, Reason: "RolloutNotStartedYet: an update run rolls it out"}},
		{name: "a failed override", conds: []metav1.Condition{cond("Scheduled", T, "", ""), cond("RolloutStarted", T, "", ""), cond("Overridden", F, "OverriddenFailed", "path /data/x does not exist")},
			want: Cell{State: StateFailed, Reason: "OverriddenFailed: path /data/x does not exist"}},
		{name: "applied, not yet available", conds: []metav1.Condition{cond("Applied", T, "", ""), cond("Available", F, "NotAvailableYet", "")},
			want: Cell{State: StateApplied, Reason: "NotAvailableYet"}},
		{name: "available", conds: []metav1.Condition{cond("Applied", T, "", ""), cond("Available", T, "AllWorkAvailable", "")},
			want: Cell{State: StateAvailable, Reason: "AllWorkAvailable"}},
		{name: "drift beats available", conds: []metav1.Condition{cond("Available", T, "", "")}, drifted: 2,
			want: Cell{State: StateDrifted, Reason: "2 objects drifted from the hub's manifests"}},
		{name: "a drift that stopped the apply", conds: []metav1.Condition{cond("Applied", F, "ApplyFailed", "")}, failed: 1, drifted: 1,
			want: Cell{State: StateDrifted, Reason: "1 objects drifted from the hub's manifests"}},
		{name: "failed objects", conds: []metav1.Condition{cond("Applied", T, "", "")}, failed: 1,
			want: Cell{State: StateFailed, Reason: "1 objects failed"}},
		{name: "diff reported", conds: []metav1.Condition{cond("DiffReported", T, "DiffReported", "")},
			want: Cell{State: StateAvailable, Reason: "DiffReported"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := cellOf(c.conds, c.failed, c.drifted, c.diffed); got != c.want {
				t.Errorf("cellOf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestSummarizeNamesTheFirstFailedObject(t *testing.T) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	crp.Name = "web"
	crp.Spec.Policy = &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To[int32](2)}
	crp.Status.Conditions = []metav1.Condition{cond("ClusterResourcePlacementScheduled", metav1.ConditionTrue, "", ""),
		cond("ClusterResourcePlacementApplied", metav1.ConditionFalse, "ApplyFailed", "1 cluster failed")}
	crp.Status.PerClusterPlacementStatuses = []placementv1beta1.PerClusterPlacementStatus{
		{ClusterName: "a", Conditions: []metav1.Condition{cond("Available", metav1.ConditionTrue, "", "")}},
		{ClusterName: "b", FailedPlacements: []placementv1beta1.FailedResourcePlacement{{
			ResourceIdentifier: placementv1beta1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "web", Name: "settings"},
			Condition:          cond("Applied", metav1.ConditionFalse, "Conflict", "owned by another placement")}}},
		{}, // a slot the scheduler could not fill
	}
	s := summarize(crp)
	if s.Policy != "PickN(2)" || s.Strategy != "RollingUpdate" || s.Available != 1 || len(s.Cells) != 2 {
		t.Fatalf("summary = %+v", s)
	}
	if s.State != StateFailed || s.Reason != "ApplyFailed: 1 cluster failed" {
		t.Errorf("placement state = %q %q", s.State, s.Reason)
	}
	if got := s.Cells["b"].Reason; got != "ConfigMap web/settings: Conflict: owned by another placement" {
		t.Errorf("reason on b = %q", got)
	}
}

func TestClusterPlacementsListPickedThenTurnedDown(t *testing.T) {
	st := &placementv1beta1.PlacementStatus{PerClusterPlacementStatuses: []placementv1beta1.PerClusterPlacementStatus{
		{ClusterName: "b", ApplicableClusterResourceOverrides: []string{"cro-1"},
			ApplicableResourceOverrides: []placementv1beta1.NamespacedName{{Namespace: "web", Name: "ro-1"}}},
	}}
	decisions := []placementv1beta1.ClusterDecision{
		{ClusterName: "b", Selected: true, Reason: "picked by scheduling policy", ClusterScore: &placementv1beta1.ClusterScore{AffinityScore: ptr.To[int32](5)}},
		{ClusterName: "z", Reason: "cluster \"z\" is not granted to this placement's workspace"},
		{ClusterName: "c", Reason: "taint not tolerated"},
	}
	got := clusterPlacements(st, decisions)
	if len(got) != 3 || got[0].Name != "b" || got[1].Name != "c" || got[2].Name != "z" {
		t.Fatalf("order = %+v", got)
	}
	if !got[0].Picked || got[0].Score != "affinity 5, topology spread 0" || len(got[0].Overrides) != 2 || got[0].Overrides[1] != "web/ro-1" {
		t.Errorf("picked cluster = %+v", got[0])
	}
	if got[2].Picked || got[2].Decision != decisions[1].Reason || got[2].Cell != nil {
		t.Errorf("turned-down cluster = %+v", got[2])
	}
}

func TestStagesShowTheirApprovals(t *testing.T) {
	s := placementv1beta1.StageUpdatingStatus{
		StageName:  "canary",
		Conditions: []metav1.Condition{cond("Progressing", metav1.ConditionFalse, "StageUpdatingWaiting", "")},
		Clusters: []placementv1beta1.ClusterUpdatingStatus{{ClusterName: "member-1",
			Conditions: []metav1.Condition{cond("Started", metav1.ConditionTrue, "", ""), cond("Succeeded", metav1.ConditionTrue, "", "")}}},
		AfterStageTaskStatus: []placementv1beta1.StageTaskStatus{{Type: placementv1beta1.StageTaskTypeApproval, ApprovalRequestName: "run-after-canary",
			Conditions: []metav1.Condition{cond("ApprovalRequestCreated", metav1.ConditionTrue, "", "")}}},
	}
	got := stageOf(s, kindClusterApprovalRequest, map[string]bool{})
	if got.State != "waiting" || len(got.Clusters) != 1 || got.Clusters[0].State != "succeeded" {
		t.Fatalf("stage = %+v", got)
	}
	want := Approval{Name: "run-after-canary", Kind: kindClusterApprovalRequest, When: "after", Created: true}
	if len(got.Approvals) != 1 || got.Approvals[0] != want {
		t.Fatalf("approvals = %+v, want %+v", got.Approvals, want)
	}
	if got := stageOf(s, kindClusterApprovalRequest, map[string]bool{"run-after-canary": true}); !got.Approvals[0].Approved {
		t.Error("an approved request does not read as approved")
	}
}

func TestGridNamesClustersAndStatesByIndex(t *testing.T) {
	placements := []PlacementSummary{{Kind: "ClusterResourcePlacement", Name: "web", State: StateFailed,
		Cells: map[string]Cell{"b": {State: StateAvailable}, "gone": {State: StateFailed, Reason: `ApplyFailed: "x"`}}}}
	v := grid(placements, []Cluster{{Name: "a"}, {Name: "b"}})
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"states":["scheduled","rolling out","applied","available","failed","drifted","diffed"],"clusters":["a","b","gone"],` +
		`"placements":[{"kind":"ClusterResourcePlacement","name":"web","policy":"","state":"failed","available":0,"cells":[[1,3],[2,4,"ApplyFailed: \"x\""]]}]}`
	if string(data) != want {
		t.Errorf("grid =\n%s\nwant\n%s", data, want)
	}
}
