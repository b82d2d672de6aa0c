package workapplier

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// ensureAppliedWork returns the member-side record of the Work, creating it
// before anything is applied so that every applied object has an owner.
func (r *Reconciler) ensureAppliedWork(ctx context.Context, work *placementv1beta1.Work) (*placementv1beta1.AppliedWork, error) {
	aw := &placementv1beta1.AppliedWork{}
	err := r.Member.GetClient().Get(ctx, client.ObjectKey{Name: work.Name}, aw)
	if err == nil {
		return aw, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading AppliedWork %s on the member cluster: %w", work.Name, err)
	}
	aw = &placementv1beta1.AppliedWork{
		ObjectMeta: metav1.ObjectMeta{Name: work.Name},
		Spec:       placementv1beta1.AppliedWorkSpec{WorkName: work.Name, WorkNamespace: work.Namespace},
	}
	if err := r.Member.GetClient().Create(ctx, aw); err != nil {
		return nil, fmt.Errorf("creating AppliedWork %s on the member cluster: %w", work.Name, err)
	}
	return aw, nil
}

type objectKey struct {
	group, kind, namespace, name string
}

func keyOf(id placementv1beta1.WorkResourceIdentifier) objectKey {
	return objectKey{id.Group, id.Kind, id.Namespace, id.Name}
}

// removeStale deletes what this Work applied before but no longer contains.
// Only objects that still name this AppliedWork as owner are touched; an
// object shared with other owners only loses our owner reference.
func (r *Reconciler) removeStale(ctx context.Context, aw *placementv1beta1.AppliedWork, ms []*manifest) error {
	current := map[objectKey]bool{}
	for _, m := range ms {
		if m.obj != nil {
			current[keyOf(m.id)] = true
		}
	}
	for _, res := range aw.Status.AppliedResources {
		if current[keyOf(res.WorkResourceIdentifier)] {
			continue
		}
		if err := r.release(ctx, aw, res.WorkResourceIdentifier); err != nil {
			return err
		}
	}
	return nil
}

// deletePropagationAnnotation is set by the hub on a Work whose placement was
// deleted with deleteStrategy Abandon.
const deletePropagationAnnotation = "fleetplane.io/delete-propagation"

// abandon drops the AppliedWork's owner reference from every object it
// applied, so that deleting the AppliedWork leaves them on the member. The
// Work's own manifests count too: the AppliedWork's record of them may lag
// the last apply, and an object left owned would be garbage-collected.
func (r *Reconciler) abandon(ctx context.Context, aw *placementv1beta1.AppliedWork, ms []*manifest) error {
	ids := map[objectKey]placementv1beta1.WorkResourceIdentifier{}
	for _, res := range aw.Status.AppliedResources {
		ids[keyOf(res.WorkResourceIdentifier)] = res.WorkResourceIdentifier
	}
	for _, m := range ms {
		if m.obj != nil {
			ids[keyOf(m.id)] = m.id
		}
	}
	for _, id := range ids {
		if err := r.releaseObject(ctx, aw, id, false); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) release(ctx context.Context, aw *placementv1beta1.AppliedWork, id placementv1beta1.WorkResourceIdentifier) error {
	return r.releaseObject(ctx, aw, id, true)
}

// releaseObject removes the AppliedWork's claim on an object: the object is
// deleted if the AppliedWork owns it alone and deleteSole is set, otherwise
// only the owner reference goes.
func (r *Reconciler) releaseObject(ctx context.Context, aw *placementv1beta1.AppliedWork, id placementv1beta1.WorkResourceIdentifier, deleteSole bool) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind})
	c := r.Member.GetClient()
	if err := c.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	var kept []metav1.OwnerReference
	ours := false
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == aw.UID {
			ours = true
			continue
		}
		kept = append(kept, ref)
	}
	switch {
	case !ours:
		return nil
	case len(kept) > 0 || !deleteSole:
		patch := client.MergeFrom(obj.DeepCopy())
		obj.SetOwnerReferences(kept)
		return client.IgnoreNotFound(c.Patch(ctx, obj, patch))
	default:
		return client.IgnoreNotFound(c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	}
}

// recordApplied keeps the AppliedWork's list of applied objects current. A
// manifest that failed this time but was applied before stays on the list,
// so that it is still cleaned up if it is later removed from the Work.
func (r *Reconciler) recordApplied(ctx context.Context, aw *placementv1beta1.AppliedWork, ms []*manifest) error {
	previous := map[objectKey]placementv1beta1.AppliedResourceMeta{}
	for _, res := range aw.Status.AppliedResources {
		previous[keyOf(res.WorkResourceIdentifier)] = res
	}
	var applied []placementv1beta1.AppliedResourceMeta
	for _, m := range ms {
		switch {
		case m.applied.ok && m.live != nil:
			applied = append(applied, placementv1beta1.AppliedResourceMeta{WorkResourceIdentifier: m.id, UID: m.live.GetUID()})
		case m.obj != nil:
			if res, ok := previous[keyOf(m.id)]; ok {
				applied = append(applied, res)
			}
		}
	}
	if equality.Semantic.DeepEqual(applied, aw.Status.AppliedResources) {
		return nil
	}
	aw.Status.AppliedResources = applied
	return r.Member.GetClient().Status().Update(ctx, aw)
}

// cleanUp runs when a Work is deleted on the hub: every object the Work
// applied is removed (or, if shared with other owners, released), then its
// AppliedWork. The owner references would let the member's garbage collector
// do the same, but it may take a while to notice a freshly installed kind.
func (r *Reconciler) cleanUp(ctx context.Context, work *placementv1beta1.Work) error {
	if !controllerutil.ContainsFinalizer(work, placementv1beta1.WorkFinalizer) {
		return nil
	}
	aw := &placementv1beta1.AppliedWork{}
	err := r.Member.GetClient().Get(ctx, client.ObjectKey{Name: work.Name}, aw)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading AppliedWork %s on the member cluster: %w", work.Name, err)
	}
	if err == nil {
		var released error
		if work.Annotations[deletePropagationAnnotation] == string(placementv1beta1.DeletePropagationPolicyAbandon) {
			released = r.abandon(ctx, aw, decode(work))
		} else {
			released = r.removeStale(ctx, aw, nil)
		}
		if released != nil {
			return released
		}
		if err := r.Member.GetClient().Delete(ctx, aw, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting AppliedWork %s on the member cluster: %w", work.Name, err)
		}
	}
	controllerutil.RemoveFinalizer(work, placementv1beta1.WorkFinalizer)
	return r.Hub.Update(ctx, work)
}
