package workgenerator

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestBindingStatusReportsRolloutStarted(t *testing.T) {
	rolloutStarted := string(placementv1beta1.ResourceBindingRolloutStarted)
	for _, c := range []struct {
		name     string
		state    placementv1beta1.BindingState
		reported *metav1.Condition
		want     metav1.ConditionStatus
		wantMsg  string
	}{
		{name: "newly bound: started, in the same write", state: placementv1beta1.BindingStateBound, want: metav1.ConditionTrue,
			wantMsg: "Detected the new changes on the resources and started the rollout process, resourceSnapshotName: web-3-snapshot"},
		{name: "bound again, the report is of an older generation", state: placementv1beta1.BindingStateBound,
			reported: &metav1.Condition{Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: placementv1beta1.RolloutStartedReason, Message: "old"},
			want:     metav1.ConditionTrue, wantMsg: "Detected the new changes on the resources and started the rollout process, resourceSnapshotName: web-3-snapshot"},
		{name: "the rollout waits: its report stands", state: placementv1beta1.BindingStateBound,
			reported: &metav1.Condition{Status: metav1.ConditionFalse, ObservedGeneration: 2, Reason: placementv1beta1.RolloutNotStartedYetReason, Message: "waiting"},
			want:     metav1.ConditionFalse, wantMsg: "waiting"},
		{name: "unscheduled: nothing said", state: placementv1beta1.BindingStateUnscheduled},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := binding("")
			b.SetGeneration(2)
			spec := b.GetBindingSpec()
			spec.State = c.state
			b.SetBindingSpec(*spec)
			if c.reported != nil {
				r := *c.reported
				r.Type = rolloutStarted
				b.SetBindingStatus(placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{r}})
			}
			st := bindingStatus(b, nil, nil)
			got := meta.FindStatusCondition(st.Conditions, rolloutStarted)
			switch {
			case c.want == "" && got != nil:
				t.Fatalf("RolloutStarted reported: %+v", got)
			case c.want == "":
			case got == nil || got.Status != c.want || got.Message != c.wantMsg || got.ObservedGeneration != 2:
				t.Fatalf("RolloutStarted = %+v, want %s %q at generation 2", got, c.want, c.wantMsg)
			}
		})
	}
}

// A ReportDiff binding whose Work could not compare some objects lists
// each of them with the member's reason, and no value of the member's.
func TestReportDiffListsTheObjectsNotCompared(t *testing.T) {
	b := binding("")
	b.SetGeneration(1)
	spec := b.GetBindingSpec()
	spec.State = placementv1beta1.BindingStateBound
	spec.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
	b.SetBindingSpec(*spec)
	notTaken := metav1.Condition{Type: placementv1beta1.WorkConditionTypeDiffReported, Status: metav1.ConditionFalse,
		Reason: placementv1beta1.ApplyResultNotTakenOver, Message: "namespace app already exists on this member cluster"}
	compared := metav1.Condition{Type: placementv1beta1.WorkConditionTypeDiffReported, Status: metav1.ConditionTrue, Reason: placementv1beta1.DiffResultNoDiffFound}
	work := placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1}}
	work.Status.Conditions = []metav1.Condition{{Type: placementv1beta1.WorkConditionTypeDiffReported, Status: metav1.ConditionFalse, ObservedGeneration: 1,
		Reason: placementv1beta1.WorkNotAllManifestsDiffReportedReason}}
	work.Status.ManifestConditions = []placementv1beta1.ManifestCondition{
		{Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "Namespace", Name: "app"}, Conditions: []metav1.Condition{notTaken}},
		{Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: 1, Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "c"}, Conditions: []metav1.Condition{compared}},
	}

	st := bindingStatus(b, []placementv1beta1.Work{work}, nil)
	if c := meta.FindStatusCondition(st.Conditions, string(placementv1beta1.ResourceBindingDiffReported)); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("DiffReported = %+v, want False", c)
	}
	if len(st.FailedPlacements) != 1 || st.FailedPlacements[0].Kind != "Namespace" || st.FailedPlacements[0].Condition != notTaken {
		t.Fatalf("failed placements = %+v, want the Namespace with the member's condition", st.FailedPlacements)
	}
	if len(st.DiffedPlacements) != 0 {
		t.Errorf("diffed placements = %+v, want none", st.DiffedPlacements)
	}
}
