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
	"sigs.k8s.io/controller-runtime/pkg/log"
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
	hub       client.Reader
	namespace string

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

func newTracker(c controller.Controller, member cluster.Cluster, hub client.Reader, namespace string) *tracker {
	return &tracker{ctrl: c, member: member, hub: hub, namespace: namespace, watched: map[schema.GroupVersionKind]bool{}}
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

// toWork maps an applied object to the Works whose AppliedWorks own it (an
// AppliedWork has its Work's name), or, for an object a placement adopted
// (which has no such owner), to the Works of the placement that manages it.
func (t *tracker) toWork(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ref := range o.GetOwnerReferences() {
		if isAppliedWork(ref) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.namespace, Name: ref.Name}})
		}
	}
	identity := o.GetAnnotations()[placementv1beta1.OwnerAnnotation]
	if len(out) > 0 || identity == "" {
		return out
	}
	works := &placementv1beta1.WorkList{}
	if err := t.hub.List(ctx, works, client.InNamespace(t.namespace)); err != nil {
		log.FromContext(ctx).Error(err, "listing Works to map an adopted object to its placement", "object", client.ObjectKeyFromObject(o))
		return nil
	}
	for i := range works.Items {
		if ownerOf(&works.Items[i]).identity == identity {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&works.Items[i])})
		}
	}
	return out
}
