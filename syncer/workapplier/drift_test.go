package workapplier

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/syncer/diff"
)

func TestLeave(t *testing.T) {
	o := ownerOf(teamWork(""))
	newManifest := func() *manifest {
		obj := object("ConfigMap", "app", "settings", nil)
		_ = unstructured.SetNestedField(obj.Object, "blue", "data", "color")
		return &manifest{obj: obj, hash: "h1"}
	}
	// live is what this placement applied (m), then changed on the member
	// to color, with the hash annotation of the manifest it applied.
	live := func(m *manifest, color, hash string) *unstructured.Unstructured {
		applied := m.obj.DeepCopy()
		o.stamp(applied, false) // adopted: no owner reference to check
		if _, err := withLastApplied(applied); err != nil {
			t.Fatal(err)
		}
		annotations := applied.GetAnnotations()
		annotations[placementv1beta1.ManifestHashAnnotation] = hash
		applied.SetAnnotations(annotations)
		_ = unstructured.SetNestedField(applied.Object, color, "data", "color")
		return applied
	}
	tests := []struct {
		name        string
		whenToApply placementv1beta1.WhenToApplyType
		color, hash string
		wantLeave   bool
		wantDrifts  int
	}{
		{"up to date", placementv1beta1.WhenToApplyTypeAlways, "blue", "h1", true, 0},
		{"a new hub version is written", placementv1beta1.WhenToApplyTypeIfNotDrifted, "blue", "h0", false, 0},
		{"a drift is reverted with Always", placementv1beta1.WhenToApplyTypeAlways, "red", "h1", false, 0},
		{"a drift is kept and reported with IfNotDrifted", placementv1beta1.WhenToApplyTypeIfNotDrifted, "red", "h1", true, 1},
		{"a drift holds back a new hub version with IfNotDrifted", placementv1beta1.WhenToApplyTypeIfNotDrifted, "red", "h0", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &applier{owner: o, strategy: placementv1beta1.ApplyStrategy{WhenToApply: tc.whenToApply}}
			m := newManifest()
			if got := a.leave(context.Background(), m, live(m, tc.color, tc.hash)); got != tc.wantLeave {
				t.Errorf("leave = %v, want %v", got, tc.wantLeave)
			}
			if len(m.drifts) != tc.wantDrifts {
				t.Errorf("drifts = %+v, want %d", m.drifts, tc.wantDrifts)
			}
			if tc.wantDrifts > 0 && (m.applied.ok || m.applied.reason != placementv1beta1.ApplyResultFoundDrifts || m.drifts[0].Path != "/data/color") {
				t.Errorf("outcome = %+v, drifts %+v", m.applied, m.drifts)
			}
		})
	}
}

// Full comparison: a label someone added on the member is drift; what the
// API server set (a Namespace's spec.finalizers) or filled in on the
// placement's own create is not. With Always it is reported and the object
// stays applied, without a write; with IfNotDrifted it holds the apply.
func TestFullComparisonCountsWhatOthersSet(t *testing.T) {
	o := ownerOf(teamWork(""))
	obj := object("Namespace", "", "app", nil)
	applied := obj.DeepCopy()
	o.stamp(applied, false)
	if _, err := withLastApplied(applied); err != nil {
		t.Fatal(err)
	}
	annotations := applied.GetAnnotations()
	annotations[placementv1beta1.ManifestHashAnnotation] = "h1"
	applied.SetAnnotations(annotations)
	live := applied.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, "hand", "metadata", "labels", "added-by")
	_ = unstructured.SetNestedStringSlice(live.Object, []string{"kubernetes"}, "spec", "finalizers")
	_ = unstructured.SetNestedField(live.Object, "default", "spec", "filledIn")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: o.manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:filledIn":{}}}`)}},
		{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:added-by":{}}}}`)}},
	})
	member := fake.NewClientBuilder().WithObjects(live.DeepCopy()).Build()
	reader := (&Reconciler{Member: &memberWithCache{cache: member, api: member}}).reader()

	for _, tc := range []struct {
		whenToApply placementv1beta1.WhenToApplyType
		wantLeave   bool
		wantOK      bool
	}{
		{placementv1beta1.WhenToApplyTypeAlways, true, true},
		{placementv1beta1.WhenToApplyTypeIfNotDrifted, true, false},
	} {
		a := &applier{owner: o, reader: reader, strategy: placementv1beta1.ApplyStrategy{WhenToApply: tc.whenToApply,
			ComparisonOption: placementv1beta1.ComparisonOptionTypeFullComparison}}
		m := &manifest{obj: obj.DeepCopy(), hash: "h1"}
		if got := a.leave(context.Background(), m, live.DeepCopy()); got != tc.wantLeave || m.applied.ok != tc.wantOK {
			t.Errorf("%s: leave = %v, outcome %+v; want %v, applied %v", tc.whenToApply, got, m.applied, tc.wantLeave, tc.wantOK)
		}
		want := []diff.Detail{{Path: "/metadata/labels/added-by", InMember: "hand", MemberOnly: true}}
		if !slices.Equal(m.drifts, want) {
			t.Errorf("%s: drifts %+v, want %+v", tc.whenToApply, m.drifts, want)
		}
	}
}
