package placement

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// withoutKind drops a resource from the fake workspace's discovery, as a
// CRD being changed or a binding not yet re-established would.
func withoutKind(resource string) func() {
	saved := served
	var kept []servedResource
	for _, r := range served {
		if r.resource != resource {
			kept = append(kept, r)
		}
	}
	served = kept
	return func() { served = saved }
}

// A read that fails or a kind that is briefly not served never shrinks a
// placement's selection: the kinds of its last selection are held to.
func TestTransientFailuresKeepTheSelection(t *testing.T) {
	ctx := context.Background()
	previous := selectedKindsOf([]placementv1beta1.ResourceIdentifier{
		{Version: "v1", Kind: "Namespace", Name: "app"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "cfg"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"},
	})
	whole := []placementv1beta1.ResourceSelectorTerm{term("v1", "Namespace", "app")}
	named := []placementv1beta1.ResourceSelectorTerm{term("rbac.authorization.k8s.io/v1", "ClusterRole", "reader")}
	notServed := func(t *testing.T, err error, gk schema.GroupKind) {
		t.Helper()
		var e *kindNotServedError
		if !errors.As(err, &e) || e.gk != gk {
			t.Fatalf("err = %v, want %s not served", err, gk)
		}
	}

	t.Run("a kind gone from discovery, in a selected namespace", func(t *testing.T) {
		defer withoutKind("deployments")()
		s := &selector{ws: fakeWorkspace(workspaceObjects()...), previous: previous}
		_, err := s.selectResources(ctx, "", whole)
		notServed(t, err, schema.GroupKind{Group: "apps", Kind: "Deployment"})

		s.dropUnserved = true
		objs, err := s.selectResources(ctx, "", whole)
		if err != nil || slices.Contains(ids(objs), "Deployment/app/web") || !slices.Contains(ids(objs), "ConfigMap/app/cfg") {
			t.Errorf("once the grace is over the kind is dropped: %v, %v", ids(objs), err)
		}
	})

	t.Run("a kind gone from discovery that was never selected", func(t *testing.T) {
		defer withoutKind("deployments")()
		s := &selector{ws: fakeWorkspace(workspaceObjects()...), previous: selectedKindsOf(nil)}
		if _, err := s.selectResources(ctx, "", whole); err != nil {
			t.Errorf("a new selection without the kind: %v", err)
		}
	})

	t.Run("a named kind the mapper does not know", func(t *testing.T) {
		defer withoutKind("clusterroles")()
		s := &selector{ws: fakeWorkspace(workspaceObjects()...), previous: previous}
		_, err := s.selectResources(ctx, "", named)
		notServed(t, err, schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"})
		s.previous = selectedKindsOf(nil)
		if _, err := s.selectResources(ctx, "", named); !errors.Is(err, errInvalidSelectors) {
			t.Errorf("never selected, the kind is an invalid selector: %v", err)
		}
	})

	t.Run("a list that answers 404 for the resource", func(t *testing.T) {
		ws := fakeWorkspace(workspaceObjects()...)
		ws.Dynamic.(*fakedynamic.FakeDynamicClient).PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "")
		})
		s := &selector{ws: ws, previous: previous}
		_, err := s.selectResources(ctx, "", whole)
		notServed(t, err, schema.GroupKind{Group: "apps", Kind: "Deployment"})
	})

	t.Run("a list that fails", func(t *testing.T) {
		ws := fakeWorkspace(workspaceObjects()...)
		ws.Dynamic.(*fakedynamic.FakeDynamicClient).PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
		})
		s := &selector{ws: ws, previous: previous, dropUnserved: true}
		if objs, err := s.selectResources(ctx, "", whole); err == nil {
			t.Errorf("a failed list is an error, never a smaller selection: %v", ids(objs))
		}
	})

	t.Run("a get that answers 404 for the path, not the object", func(t *testing.T) {
		ws := fakeWorkspace(workspaceObjects()...)
		ws.Dynamic.(*fakedynamic.FakeDynamicClient).PrependReactor("get", "clusterroles", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "")
		})
		s := &selector{ws: ws, previous: previous}
		_, err := s.selectResources(ctx, "", named)
		notServed(t, err, schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"})
	})

}

func TestUnservedHolds(t *testing.T) {
	var h unservedHolds
	start := time.Now()
	if left, ok := h.hold("p", start, time.Minute); !ok || left != time.Minute {
		t.Errorf("first hold: %v %v", left, ok)
	}
	if left, ok := h.hold("p", start.Add(40*time.Second), time.Minute); !ok || left != 20*time.Second {
		t.Errorf("within the grace: %v %v", left, ok)
	}
	if _, ok := h.hold("p", start.Add(time.Minute), time.Minute); ok {
		t.Error("the grace is over")
	}
	h.forget("p")
	if _, ok := h.hold("p", start.Add(2*time.Minute), time.Minute); !ok {
		t.Error("a new hold starts over")
	}
}
