package placement

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

func TestSelectionsHoldWhileNothingChanged(t *testing.T) {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1", Generation: 2}}
	var s selections
	s.put("ws/web", selection{uid: "u1", generation: 2, epoch: 7, hash: "h"})
	if _, ok := s.get("ws/web", p, 7); !ok {
		t.Fatal("the selection does not hold though nothing changed")
	}
	if _, ok := s.get("ws/web", p, 8); ok {
		t.Fatal("the selection holds after an object of the workspace changed")
	}
	p.Generation = 3
	if _, ok := s.get("ws/web", p, 7); ok {
		t.Fatal("the selection holds after the placement's spec changed")
	}
	recreated := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u2", Generation: 2}}
	if _, ok := s.get("ws/web", recreated, 7); ok {
		t.Fatal("the selection of a deleted placement holds for one of the same name")
	}
	s.forget("ws/web")
	if _, ok := s.get("ws/web", &placementv1beta1.ClusterResourcePlacement{ObjectMeta: p.ObjectMeta}, 7); ok {
		t.Fatal("a forgotten selection holds")
	}
}

func TestReusedSnapshotOnlyIfItIsTheSelections(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k := placements.Key{Name: "web"}
	snap := k.NewResourceSnapshot()
	snap.SetName("web-1-snapshot")
	snap.SetLabels(map[string]string{placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.IsLatestSnapshotLabel: "true", placementv1beta1.ResourceIndexLabel: "1"})
	snap.SetAnnotations(map[string]string{placementv1beta1.ResourceGroupHashAnnotation: "h1"})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(snap).Build()
	ctx := context.Background()

	got, err := reusedSnapshot(ctx, c, k, selection{hash: "h1"})
	if err != nil || got == nil || got.GetName() != "web-1-snapshot" {
		t.Fatalf("reusedSnapshot = %v, %v; want web-1-snapshot", got, err)
	}
	if got, err := reusedSnapshot(ctx, c, k, selection{hash: "h2"}); err != nil || got != nil {
		t.Fatalf("a latest snapshot of other objects was reused: %v, %v", got, err)
	}
}
