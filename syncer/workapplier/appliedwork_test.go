package workapplier

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestAppliedList(t *testing.T) {
	id := func(name string) placementv1beta1.WorkResourceIdentifier {
		return placementv1beta1.WorkResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: name}
	}
	record := func(name string, uid types.UID) placementv1beta1.AppliedResourceMeta {
		return placementv1beta1.AppliedResourceMeta{WorkResourceIdentifier: id(name), UID: uid}
	}
	applied := func(name string, uid types.UID) *manifest {
		live := &unstructured.Unstructured{}
		live.SetUID(uid)
		return &manifest{id: id(name), obj: &unstructured.Unstructured{}, live: live, applied: applyOutcome{ok: true}}
	}
	failed := func(name string) *manifest {
		return &manifest{id: id(name), obj: &unstructured.Unstructured{}}
	}
	previous := []placementv1beta1.AppliedResourceMeta{record("kept", "1"), record("failing", "2"), record("stale", "3")}
	ms := []*manifest{applied("kept", "1"), failed("failing"), applied("new", "4"), failed("never-applied")}

	for _, tc := range []struct {
		keepStale bool
		want      []placementv1beta1.AppliedResourceMeta
	}{
		{false, []placementv1beta1.AppliedResourceMeta{record("kept", "1"), record("failing", "2"), record("new", "4")}},
		// A stale object not let go of yet stays on record.
		{true, []placementv1beta1.AppliedResourceMeta{record("kept", "1"), record("failing", "2"), record("new", "4"), record("stale", "3")}},
	} {
		got := appliedList(previous, ms, tc.keepStale)
		if len(got) != len(tc.want) {
			t.Fatalf("keepStale=%v: got %v, want %v", tc.keepStale, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("keepStale=%v: entry %d is %v, want %v", tc.keepStale, i, got[i], tc.want[i])
			}
		}
	}
}
