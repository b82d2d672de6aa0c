package workapplier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

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
	err = r.Member.GetClient().Create(ctx, aw)
	if apierrors.IsAlreadyExists(err) {
		// Created by this Work's previous reconcile, which the cache has
		// not seen yet.
		aw = &placementv1beta1.AppliedWork{}
		err = r.Member.GetAPIReader().Get(ctx, client.ObjectKey{Name: work.Name}, aw)
	}
	if err != nil {
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

// releaseMode says what happens to an object a placement lets go of.
type releaseMode int

const (
	// deleteCreated deletes the object if this placement created it and
	// nothing else owns it, and otherwise leaves it, released.
	deleteCreated releaseMode = iota
	// keep leaves every object on the member, released (deleteStrategy
	// Abandon).
	keep
	// handOver only drops this Work's owner reference: another Work of the
	// same placement holds the object now.
	handOver
)

// removeStale lets go of what this Work applied before but no longer
// contains; what another Work of its placement holds now is handed over.
func (r *Reconciler) removeStale(ctx context.Context, work *placementv1beta1.Work, aw *placementv1beta1.AppliedWork, o owner, ms []*manifest) error {
	current := map[objectKey]bool{}
	for _, m := range ms {
		if m.obj != nil {
			current[keyOf(m.id)] = true
		}
	}
	var moved map[objectKey]bool
	for _, res := range aw.Status.AppliedResources {
		key := keyOf(res.WorkResourceIdentifier)
		if current[key] {
			continue
		}
		if moved == nil {
			var settled bool
			var err error
			if moved, settled, err = r.heldByOtherWorks(ctx, work, o); err != nil {
				return err
			}
			if !settled {
				// The hub is still writing this placement's Works: where a
				// stale object went is not known yet.
				return fmt.Errorf("%w: the other Works of %s are not at resource snapshot %s yet; Work %s lets go of what it no longer holds then",
					errUnsettled, o.identity, work.Labels[placementv1beta1.ParentResourceSnapshotIndexLabel], work.Name)
			}
		}
		mode := deleteCreated
		if moved[key] {
			mode = handOver
		}
		if _, err := r.release(ctx, work, o, res.WorkResourceIdentifier, mode); err != nil {
			return err
		}
	}
	return nil
}

// errUnsettled says a Work waits for the other Works of its placement
// before removing what it no longer holds.
var errUnsettled = errors.New("waiting for the placement's other Works")

// heldByOtherWorks lists what the placement's other Works for this member
// hold. Snapshot shards, and so Works, shift when objects are added to or
// removed from a large placement: an object that moved from one Work to
// another must be handed over, not deleted and re-created. settled tells
// whether the other Works are at this Work's resource snapshot: the hub
// creates new Works before it updates the others, so once they all are,
// the cache shows where every object went.
func (r *Reconciler) heldByOtherWorks(ctx context.Context, work *placementv1beta1.Work, o owner) (held map[objectKey]bool, settled bool, err error) {
	works := &placementv1beta1.WorkList{}
	if err := r.Hub.List(ctx, works, client.InNamespace(r.Namespace)); err != nil {
		return nil, false, err
	}
	held, settled = map[objectKey]bool{}, true
	index := work.Labels[placementv1beta1.ParentResourceSnapshotIndexLabel]
	for i := range works.Items {
		w := &works.Items[i]
		if w.Name == work.Name || !w.DeletionTimestamp.IsZero() || ownerOf(w).identity != o.identity {
			continue
		}
		settled = settled && w.Labels[placementv1beta1.ParentResourceSnapshotIndexLabel] == index
		for _, m := range decode(w) {
			if m.obj != nil {
				held[keyOf(m.id)] = true
			}
		}
	}
	return held, settled, nil
}

// releaseAll lets go of everything the Work applied: what its AppliedWork
// recorded and its own manifests (the record may lag the last apply, or be
// gone), a few objects at a time. It returns the objects it deleted that
// the member has not finished deleting yet.
func (r *Reconciler) releaseAll(ctx context.Context, work *placementv1beta1.Work, aw *placementv1beta1.AppliedWork, mode releaseMode) ([]deleting, error) {
	ids := map[objectKey]placementv1beta1.WorkResourceIdentifier{}
	if aw != nil {
		for _, res := range aw.Status.AppliedResources {
			ids[keyOf(res.WorkResourceIdentifier)] = res.WorkResourceIdentifier
		}
	}
	for _, m := range decode(work) {
		if m.obj != nil {
			ids[keyOf(m.id)] = m.id
		}
	}
	// The member cache is read for these kinds: their informers stay
	// until the Work is gone.
	kinds := sets.New[schema.GroupVersionKind]()
	for _, id := range ids {
		kinds.Insert(gvkOf(id))
	}
	if err := r.tracker.use(ctx, work.Name, kinds); err != nil {
		return nil, err
	}
	o := ownerOf(work)
	held := map[objectKey]bool{}
	if mode == deleteCreated {
		var err error
		if held, _, err = r.heldByOtherWorks(ctx, work, o); err != nil {
			return nil, err
		}
	}
	var mu sync.Mutex
	var pending []deleting
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(applyParallelism)
	for key, id := range ids {
		idMode := mode
		if held[key] {
			idMode = handOver
		}
		g.Go(func() error {
			d, err := r.release(gctx, work, o, id, idMode)
			if d != nil {
				if d.cached {
					r.deletions.add(work, key)
				}
				mu.Lock()
				defer mu.Unlock()
				pending = append(pending, *d)
			}
			return err
		})
	}
	err := g.Wait()
	slices.SortFunc(pending, func(a, b deleting) int { return strings.Compare(a.String(), b.String()) })
	return pending, err
}

// deleting is an object the placement deleted on the member that is still
// there: its finalizers, or the garbage collection of its dependents, hold it.
type deleting struct {
	id         placementv1beta1.WorkResourceIdentifier
	finalizers []string
	// cached tells that the member cache showed the object.
	cached bool
}

func (d deleting) String() string {
	s := d.id.Kind + " " + d.id.Name
	if d.id.Namespace != "" {
		s = d.id.Kind + " " + d.id.Namespace + "/" + d.id.Name
	}
	if len(d.finalizers) > 0 {
		s += " (finalizers: " + strings.Join(d.finalizers, ", ") + ")"
	}
	return s
}

// release lets go of one object. It decides on the member cache's copy and
// writes with that copy's resourceVersion as a precondition: acting on a
// stale copy could leave an owner reference behind (and the garbage
// collector would then delete an object meant to be kept), so a write the
// API server refuses as a conflict is decided again on a fresh read, and so
// is a copy that does not look like this placement's (nothing written would
// catch it being stale). An object the cache does not hold is read from the
// API server (the cache may not have seen it yet), unless work, deleted,
// deleted it after the cache had shown it: then the member has removed it.
// An object this placement does not manage is left alone; one it created
// and owns alone is deleted in deleteCreated mode; one another of its Works
// still holds keeps the placement's bookkeeping in that mode, for that Work
// to answer for; any other is kept, without the placement's owner
// reference and bookkeeping.
//
// An object it deletes is returned as deleting until the member has
// removed it: the Work waits for that.
func (r *Reconciler) release(ctx context.Context, work *placementv1beta1.Work, o owner, id placementv1beta1.WorkResourceIdentifier, mode releaseMode) (*deleting, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvkOf(id))
	cached, synced, err := r.reader().cached(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, obj)
	switch {
	case isNoKindMatch(err):
		return r.releaseServed(ctx, work, o, id, mode)
	case err != nil:
		return nil, err
	case synced && !cached && r.deletions.has(work, keyOf(id)):
		return nil, nil
	case !cached || !placedBy(obj, o, work.Name):
		return r.releaseFresh(ctx, work, o, id, mode)
	}
	d, err := r.releaseObject(ctx, work.Name, o, id, obj, mode)
	if apierrors.IsConflict(err) {
		return r.releaseFresh(ctx, work, o, id, mode)
	}
	if d != nil {
		d.cached = true
	}
	return d, err
}

// releaseFresh lets go of the object as the API server has it.
func (r *Reconciler) releaseFresh(ctx context.Context, work *placementv1beta1.Work, o owner, id placementv1beta1.WorkResourceIdentifier, mode releaseMode) (*deleting, error) {
	obj, err := r.reader().fresh(ctx, gvkOf(id), client.ObjectKey{Namespace: id.Namespace, Name: id.Name})
	if isNoKindMatch(err) {
		return r.releaseServed(ctx, work, o, id, mode)
	}
	if obj == nil || err != nil {
		return nil, err
	}
	return r.releaseObject(ctx, work.Name, o, id, obj, mode)
}

// releaseServed lets go of an object whose recorded version the member no
// longer serves — a CRD upgrade dropped it; the objects are still there at
// the version it serves now. A kind it serves at no version (its CRD never
// came, or went, and its objects with it) has nothing left to let go of:
// failing on it would hold the Work for ever.
func (r *Reconciler) releaseServed(ctx context.Context, work *placementv1beta1.Work, o owner, id placementv1beta1.WorkResourceIdentifier, mode releaseMode) (*deleting, error) {
	mapping, err := r.Member.GetRESTMapper().RESTMapping(schema.GroupKind{Group: id.Group, Kind: id.Kind})
	if isNoKindMatch(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if mapping.GroupVersionKind.Version == id.Version {
		return nil, fmt.Errorf("the member cluster serves %s but could not read %s %q in namespace %q", mapping.GroupVersionKind, id.Kind, id.Name, id.Namespace)
	}
	id.Version = mapping.GroupVersionKind.Version
	// Read from the API server: the cache would start a watch of that
	// version the tracker does not know of, and so never stops.
	return r.releaseFresh(ctx, work, o, id, mode)
}

// isNoKindMatch tells whether err says the member serves no such kind at
// the version asked (and not that discovery failed).
func isNoKindMatch(err error) bool {
	var noKind *meta.NoKindMatchError
	return errors.As(err, &noKind)
}

// placedBy tells whether obj is the placement's, or its Work's: only then
// does releasing it write anything.
func placedBy(obj *unstructured.Unstructured, o owner, appliedWork string) bool {
	if o.manages(obj) {
		return true
	}
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(ref metav1.OwnerReference) bool {
		return isAppliedWork(ref) && ref.Name == appliedWork
	})
}

// releaseObject lets go of obj as read, on the condition that it has not
// changed since.
func (r *Reconciler) releaseObject(ctx context.Context, appliedWork string, o owner, id placementv1beta1.WorkResourceIdentifier, obj *unstructured.Unstructured, mode releaseMode) (*deleting, error) {
	if !placedBy(obj, o, appliedWork) {
		return nil, nil
	}
	var kept []metav1.OwnerReference
	for _, ref := range obj.GetOwnerReferences() {
		if !isAppliedWork(ref) || ref.Name != appliedWork {
			kept = append(kept, ref)
		}
	}
	c := r.Member.GetClient()
	if mode == deleteCreated && o.createdBy(obj) && len(kept) == 0 {
		d := &deleting{id: id, finalizers: obj.GetFinalizers()}
		if !obj.GetDeletionTimestamp().IsZero() {
			return d, nil
		}
		err := c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(obj.GetUID()), ResourceVersion: ptr.To(obj.GetResourceVersion())})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		log.FromContext(ctx).V(2).Info("deleting an object the placement created on the member", "object", describe(obj))
		// Whether it is gone already shows on the next round.
		return d, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.SetOwnerReferences(kept)
	if mode == handOver || (mode == deleteCreated && slices.ContainsFunc(kept, isAppliedWork)) {
		// Still the placement's — another of its Works holds it too (an
		// object that moved to another Work before this one let go of it,
		// whichever of the two goes first): its bookkeeping stays for the
		// Work that answers for it now. A placement letting go of what it
		// placed (keep mode) strips it at the first of its Works, so that
		// no later one deletes it.
		log.FromContext(ctx).V(2).Info("handing an object over to another Work of the placement", "object", describe(obj), "appliedWork", appliedWork)
		return nil, client.IgnoreNotFound(c.Patch(ctx, obj, patch))
	}
	annotations := obj.GetAnnotations()
	for _, k := range bookkeeping {
		delete(annotations, k)
	}
	if annotations[placementv1beta1.NamespaceOwnerAnnotation] == o.workspace && o.workspace != "" {
		delete(annotations, placementv1beta1.NamespaceOwnerAnnotation)
		delete(annotations, placementv1beta1.NamespaceOwnerPathAnnotation)
	}
	obj.SetAnnotations(annotations)
	labels := obj.GetLabels()
	delete(labels, placementv1beta1.PlacedLabel)
	obj.SetLabels(labels)
	log.FromContext(ctx).V(2).Info("releasing an object: it stays on the member, no longer the placement's", "object", describe(obj))
	return nil, client.IgnoreNotFound(c.Patch(ctx, obj, patch))
}

// recordApplied keeps the AppliedWork's list of applied objects current.
func (r *Reconciler) recordApplied(ctx context.Context, aw *placementv1beta1.AppliedWork, ms []*manifest, keepStale bool) error {
	applied := appliedList(aw.Status.AppliedResources, ms, keepStale)
	if equality.Semantic.DeepEqual(applied, aw.Status.AppliedResources) {
		return nil
	}
	aw.Status.AppliedResources = applied
	return r.Member.GetClient().Status().Update(ctx, aw)
}

// appliedList is what the Work holds on the member after an apply: what
// it applied now, and what it applied before and still has to answer for —
// a manifest that failed this time (so that it is still cleaned up if it
// is later removed from the Work) and, with keepStale, what the Work no
// longer contains but has not let go of yet (so that a later round does).
func appliedList(previous []placementv1beta1.AppliedResourceMeta, ms []*manifest, keepStale bool) []placementv1beta1.AppliedResourceMeta {
	before := map[objectKey]placementv1beta1.AppliedResourceMeta{}
	for _, res := range previous {
		before[keyOf(res.WorkResourceIdentifier)] = res
	}
	var applied []placementv1beta1.AppliedResourceMeta
	for _, m := range ms {
		switch {
		case m.applied.ok && m.live != nil && !m.diffReported:
			applied = append(applied, placementv1beta1.AppliedResourceMeta{WorkResourceIdentifier: m.id, UID: m.live.GetUID()})
		case m.obj != nil:
			if res, ok := before[keyOf(m.id)]; ok {
				applied = append(applied, res)
			}
		}
		if m.obj != nil {
			delete(before, keyOf(m.id))
		}
	}
	if keepStale {
		for _, res := range previous {
			if _, stale := before[keyOf(res.WorkResourceIdentifier)]; stale {
				applied = append(applied, res)
			}
		}
	}
	return applied
}

// cleanUp runs when a Work is deleted on the hub: the placement lets go of
// everything the Work applied — deleting what it created, or keeping
// everything when its placement was deleted with deleteStrategy Abandon —
// then the AppliedWork goes. The AppliedWork is read from the API server: a
// cache miss must not skip the release.
func (r *Reconciler) cleanUp(ctx context.Context, work *placementv1beta1.Work) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(work, placementv1beta1.WorkFinalizer) {
		return ctrl.Result{}, nil
	}
	aw := &placementv1beta1.AppliedWork{}
	err := r.Member.GetAPIReader().Get(ctx, client.ObjectKey{Name: work.Name}, aw)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("reading AppliedWork %s on the member cluster: %w", work.Name, err)
	}
	if err != nil {
		aw = nil
	}
	mode := deleteCreated
	if work.Annotations[placementv1beta1.DeletePropagationAnnotation] == string(placementv1beta1.DeletePropagationPolicyAbandon) {
		mode = keep
	}
	pending, err := r.releaseAll(ctx, work, aw, mode)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(pending) > 0 {
		return r.waitForDeletion(ctx, work, pending)
	}
	if aw != nil {
		// Kept objects were released from it already; should one have been
		// missed, orphaning keeps the member's garbage collector off it.
		propagation := metav1.DeletePropagationBackground
		if mode == keep {
			propagation = metav1.DeletePropagationOrphan
		}
		if err := r.Member.GetClient().Delete(ctx, aw, client.PropagationPolicy(propagation)); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting AppliedWork %s on the member cluster: %w", work.Name, err)
		}
	}
	controllerutil.RemoveFinalizer(work, placementv1beta1.WorkFinalizer)
	if err := r.Hub.Update(ctx, work); err != nil {
		return ctrl.Result{}, err
	}
	r.deletions.forget(work.Name)
	return ctrl.Result{}, r.tracker.forget(ctx, work.Name)
}

// deletionRecheck is when a Work waiting for the member to delete what it
// placed looks again without an event (a kind's watch may be just starting).
const deletionRecheck = time.Minute

// maxListedDeleting caps the objects the Removed condition names.
const maxListedDeleting = 10

// waitForDeletion keeps a deleted Work, with its finalizer, until the
// member has deleted what it placed: the placement is gone only once its
// objects are. The objects' kinds are watched, so their removal brings the
// Work back; the Work's Removed condition names what is left.
func (r *Reconciler) waitForDeletion(ctx context.Context, work *placementv1beta1.Work, pending []deleting) (ctrl.Result, error) {
	// The kinds are in use since releaseAll: an informer stopped now would
	// list its kind all over again on the next round.
	kinds := sets.New[schema.GroupVersionKind]()
	for _, d := range pending {
		kinds.Insert(gvkOf(d.id))
	}
	for gvk := range kinds {
		if err := r.tracker.track(ctx, gvk); err != nil {
			return ctrl.Result{}, err
		}
	}
	names := make([]string, 0, maxListedDeleting+1)
	for i, d := range pending {
		if i == maxListedDeleting {
			names = append(names, fmt.Sprintf("and %d more", len(pending)-i))
			break
		}
		names = append(names, d.String())
	}
	removed := metav1.Condition{Type: placementv1beta1.WorkConditionTypeRemoved, Status: metav1.ConditionFalse,
		Reason: placementv1beta1.WorkRemovalPendingReason, ObservedGeneration: work.Generation,
		Message: fmt.Sprintf("waiting for the member cluster to delete %d object(s) this Work placed: %s", len(pending), strings.Join(names, ", "))}
	if meta.SetStatusCondition(&work.Status.Conditions, removed) {
		if err := r.Hub.Status().Update(ctx, work); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: deletionRecheck}, nil
}
