package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func cachedBinding(uid types.UID, rv string) placementv1beta1.BindingObj {
	return &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: string(uid), UID: uid, ResourceVersion: rv}}
}

func TestInFlight(t *testing.T) {
	var f InFlight
	f.Wrote("ws/web", "a", "10")
	f.Wrote("ws/web", "b", "11")

	if !f.Pending("ws/web", []placementv1beta1.BindingObj{cachedBinding("a", "10"), cachedBinding("b", "15")}) {
		t.Fatal("not pending though the cache does not show a's write")
	}
	if len(f.byPlacement["ws/web"]) != 1 {
		t.Fatalf("remembered: %v, want a only (b's write shows in the cache)", f.byPlacement)
	}
	if f.Pending("ws/web", []placementv1beta1.BindingObj{cachedBinding("a", "12")}) {
		t.Fatal("pending once the cache shows every write")
	}
	if len(f.byPlacement) != 0 {
		t.Fatalf("writes still remembered: %v", f.byPlacement)
	}

	f.Wrote("ws/web", "c", "20")
	if f.Pending("ws/web", nil) || len(f.byPlacement) != 0 {
		t.Fatalf("a binding that is gone is still remembered: %v", f.byPlacement)
	}
	f.Wrote("ws/web", "d", "30")
	f.Forget("ws/web")
	if len(f.byPlacement) != 0 {
		t.Fatalf("a forgotten placement is remembered: %v", f.byPlacement)
	}
}
