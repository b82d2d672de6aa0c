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
