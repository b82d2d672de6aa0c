package workapplier

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// The cache may be behind the syncer's own previous report: the status is
// then written over the Work as the hub has it, without an error (which
// would apply the whole Work again after a backoff), unless the Work's spec
// changed meanwhile.
func TestWriteStatusOverAReportTheCacheHasNotSeen(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "fleet-member-m1", UID: "w-1", Generation: 1}}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(work).WithObjects(work).Build()
	r := &Reconciler{Hub: hub, HubReader: hub}
	read := func() *placementv1beta1.Work {
		w := &placementv1beta1.Work{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(work), w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	cached := read()
	previous := cached.DeepCopy()
	meta.SetStatusCondition(&previous.Status.Conditions, metav1.Condition{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionFalse, Reason: "Earlier"})
	if err := hub.Status().Update(ctx, previous); err != nil {
		t.Fatal(err)
	}
	applied := []*manifest{{id: settingsID, applied: applyOutcome{ok: true, reason: placementv1beta1.ApplyResultApplied},
		avail: availabilityOutcome{status: string(metav1.ConditionTrue), reason: placementv1beta1.AvailabilityResultAvailable}}}

	if err := r.updateStatus(ctx, cached.DeepCopy(), applied); !apierrors.IsConflict(err) {
		t.Fatalf("the stale copy's status update = %v, want a conflict", err)
	}
	if err := r.writeStatus(ctx, cached.DeepCopy(), applied); err != nil {
		t.Fatalf("writeStatus over a report the cache has not seen: %v", err)
	}
	if c := meta.FindStatusCondition(read().Status.Conditions, placementv1beta1.WorkConditionTypeAvailable); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("the report was not written: %+v", read().Status)
	}

	changed := read()
	changed.Generation = 2
	if err := hub.Update(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if err := r.writeStatus(ctx, cached.DeepCopy(), nil); err != nil {
		t.Fatalf("writeStatus for a Work whose spec changed: %v", err)
	}
	if got := read().Status.ManifestConditions; len(got) != 1 {
		t.Errorf("a report for the earlier spec was written over it: %+v", got)
	}
}
