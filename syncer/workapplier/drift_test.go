package workapplier

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
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
			if got := a.leave(m, live(m, tc.color, tc.hash)); got != tc.wantLeave {
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
