package workgenerator

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestRecentWritesWaitOnlyForAFirstReport(t *testing.T) {
	cond := func(t placementv1beta1.ResourceBindingConditionType, s metav1.ConditionStatus, gen int64) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: s, ObservedGeneration: gen}
	}
	status := func(conds ...metav1.Condition) placementv1beta1.ResourceBindingStatus {
		return placementv1beta1.ResourceBindingStatus{Conditions: conds}
	}
	synced := cond(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionTrue, 2)
	applying := status(synced, cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionUnknown, 2))
	diffing := status(synced, cond(placementv1beta1.ResourceBindingDiffReported, metav1.ConditionUnknown, 2))
	failed := status(synced, cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionFalse, 2))
	available := status(synced, cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionTrue, 2), cond(placementv1beta1.ResourceBindingAvailable, metav1.ConditionTrue, 2))
	notSynced := status(cond(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionFalse, 2))
	availableBefore := status(cond(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionTrue, 1),
		cond(placementv1beta1.ResourceBindingApplied, metav1.ConditionTrue, 1), cond(placementv1beta1.ResourceBindingAvailable, metav1.ConditionTrue, 1))
	// The binding at generation 2, as stored: new, reported on for
	// generation 1, or reported on for generation 2 already.
	stored := func(st placementv1beta1.ResourceBindingStatus) placementv1beta1.BindingObj {
		b := binding("")
		b.SetGeneration(2)
		b.SetBindingStatus(st)
		return b
	}
	fresh := stored(placementv1beta1.ResourceBindingStatus{})
	request := func(name string) mcreconcile.Request {
		return mcreconcile.Request{ClusterName: "2abc", Request: reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}}
	}

	clock := clocktesting.NewFakePassiveClock(time.Now())
	r := newRecentWrites(clock)
	if got := r.wait(request("b"), fresh, applying); got != 0 {
		t.Errorf("Works never written: wait = %v, want 0", got)
	}
	r.note(request("b"))
	clock.SetTime(clock.Now().Add(500 * time.Millisecond))
	r.note(request("b")) // written again: the wait still counts from the first write
	for name, c := range map[string]struct {
		b    placementv1beta1.BindingObj
		st   placementv1beta1.ResourceBindingStatus
		want time.Duration
	}{
		"new, being applied":                  {fresh, applying, reportGrace - 500*time.Millisecond},
		"new, reporting differences":          {fresh, diffing, reportGrace - 500*time.Millisecond},
		"bound again, being applied":          {stored(availableBefore), applying, reportGrace - 500*time.Millisecond},
		"reported on this generation already": {stored(notSynced), applying, 0},
		"failed":                              {fresh, failed, 0},
		"reported available":                  {fresh, available, 0},
		"Works failed to sync":                {fresh, notSynced, 0},
	} {
		if got := r.wait(request("b"), c.b, c.st); got != c.want {
			t.Errorf("%s: wait = %v, want %v", name, got, c.want)
		}
	}
	if got := r.wait(request("other"), fresh, applying); got != 0 {
		t.Errorf("another binding: wait = %v, want 0", got)
	}
	clock.SetTime(clock.Now().Add(reportGrace))
	if got := r.wait(request("b"), fresh, applying); got != 0 {
		t.Errorf("after reportGrace: wait = %v, want 0", got)
	}
}
