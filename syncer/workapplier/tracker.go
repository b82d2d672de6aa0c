package workapplier

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// tracker watches, on the member cluster, every kind the syncer has applied,
// and maps changes of applied objects back to their Work, so availability is
// re-assessed when it changes instead of by polling.
type tracker struct {
	ctrl      controller.Controller
	member    cluster.Cluster
	namespace string

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

func newTracker(c controller.Controller, member cluster.Cluster, namespace string) *tracker {
	return &tracker{ctrl: c, member: member, namespace: namespace, watched: map[schema.GroupVersionKind]bool{}}
}

// track starts a watch for gvk unless one is running.
func (t *tracker) track(_ context.Context, gvk schema.GroupVersionKind) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watched[gvk] {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	src := source.Kind(t.member.GetCache(), client.Object(obj), handler.EnqueueRequestsFromMapFunc(t.toWork))
	if err := t.ctrl.Watch(src); err != nil {
		return err
	}
	t.watched[gvk] = true
	return nil
}

// toWork maps an applied object to the Works whose AppliedWorks own it; an
// AppliedWork has its Work's name.
func (t *tracker) toWork(_ context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "AppliedWork" && ref.APIVersion == placementv1beta1.GroupVersion.String() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.namespace, Name: ref.Name}})
		}
	}
	return out
}
