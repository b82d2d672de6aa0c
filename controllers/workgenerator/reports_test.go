package workgenerator

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestRecentWritesWaitOnlyForAFirstReport(t *testing.T) {
	cond := func(t placementv1beta1.ResourceBindingConditionType, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: s}
	}
	synced := cond(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionTrue)
	applying := placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{synced, cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionUnknown)}}
	diffing := placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{synced, cond(placementv1beta1.ResourceBindingDiffReported, metav1.ConditionUnknown)}}
	failed := placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{synced, cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionFalse)}}
	available := placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{synced, cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionTrue),
		cond(placementv1beta1.ResourceBindingAvailable, metav1.ConditionTrue)}}
	notSynced := placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{cond(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionFalse)}}

	clock := clocktesting.NewFakePassiveClock(time.Now())
	r := newRecentWrites(clock)
	if got := r.wait("b", applying); got != 0 {
		t.Errorf("Works never written: wait = %v, want 0", got)
	}
	r.note("b")
	clock.SetTime(clock.Now().Add(500 * time.Millisecond))
	for name, c := range map[string]struct {
		st   placementv1beta1.ResourceBindingStatus
		want time.Duration
	}{
		"being applied":         {applying, reportGrace - 500*time.Millisecond},
		"reporting differences": {diffing, reportGrace - 500*time.Millisecond},
		"failed":                {failed, 0},
		"reported available":    {available, 0},
		"Works failed to sync":  {notSynced, 0},
	} {
		if got := r.wait("b", c.st); got != c.want {
			t.Errorf("%s: wait = %v, want %v", name, got, c.want)
		}
	}
	if got := r.wait("other", applying); got != 0 {
		t.Errorf("another binding: wait = %v, want 0", got)
	}
	clock.SetTime(clock.Now().Add(reportGrace))
	if got := r.wait("b", applying); got != 0 {
		t.Errorf("after reportGrace: wait = %v, want 0", got)
	}
}
