// Package placement reconciles ClusterResourcePlacements and
// ResourcePlacements in every workspace that binds the placement API: it
// resolves the resource selectors in the placement's workspace, keeps the
// immutable resource and scheduling-policy snapshots current, and folds what
// the scheduler, the rollout and the member clusters report into the
// placement's status.
package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controllers in logs and events.
const ControllerName = "fleet-placement"

// Workers is how many placements are reconciled at once. A reconcile mostly
// waits on the API server (the first one in a new workspace resolves its
// path and discovers its APIs); with one worker, 500 new team workspaces'
// placements queued behind each other at 0.6 s each.
const Workers = 4

// Reconciler reconciles one kind of placement (cluster-scoped or namespaced).
type Reconciler struct {
	Manager    mcmanager.Manager
	Workspaces *clients.Factory
	// TeamReservedNamespaces are the member namespaces team placements may
	// not touch beyond teampolicy.ReservedNamespaces (the hub's additions).
	TeamReservedNamespaces []string
	placements.Scope
	// ResourceEpochs, if set, tells when a workspace's placeable objects
	// changed (resourcechange.Detector.Epoch); selections are then reused
	// while nothing changed.
	ResourceEpochs func(logicalcluster.Name) (uint64, bool)

	// UnservedKindGrace is how long the last snapshot is kept while a kind
	// it selected is not served (DefaultUnservedKindGrace when zero).
	UnservedKindGrace time.Duration

	rollouts     rolloutClock
	removals     removals
	selections   selections
	statusWrites statusWrites
	unserved     unservedHolds
}

// unservedRecheck is how often a placement held by an unserved kind looks
// again.
const unservedRecheck = 15 * time.Second

func (r *Reconciler) unservedKindGrace() time.Duration {
	if r.UnservedKindGrace > 0 {
		return r.UnservedKindGrace
	}
	return DefaultUnservedKindGrace
}

// SetupWithManager registers the controller for its placement kind.
// resourceChanges, if set, enqueues placements whose selected resources
// changed.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager, resourceChanges source.TypedSource[mcreconcile.Request]) error {
	k := r.Sample()
	b := mcbuilder.ControllerManagedBy(mgr).
		Named(r.Name(ControllerName)).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: Workers}).
		For(k.New(), mcbuilder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		// Scheduling results and binding progress show in the status.
		Watches(k.NewPolicySnapshot(), mchandler.EnqueueRequestsFromMapFunc(placements.ToPlacement)).
		Watches(k.NewBinding(), mchandler.EnqueueRequestsFromMapFunc(placements.ToPlacement))
	if resourceChanges != nil {
		b = b.WatchesRawSource(resourceChanges)
	}
	if !r.Namespaced {
		// A deleted status copy is written again.
		b = b.Watches(&placementv1beta1.ClusterResourcePlacementStatus{}, mchandler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
		}), mcbuilder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		}))
	}
	return b.Complete(metrics.Reconciler[mcreconcile.Request](r.Name(ControllerName), r))
}

// Reconcile brings one placement's snapshots and status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, p, err := r.Lookup(ctx, r.Manager, r.Workspaces, req)
	if err != nil || p == nil {
		if p == nil && err == nil {
			r.rollouts.forget(req.String())
			r.removals.forget(req.String())
			r.selections.forget(req.String())
			r.statusWrites.forget(req.String())
			r.unserved.forget(req.String())
		}
		return ctrl.Result{}, err
	}
	k := placements.KeyOf(p)
	ws, err := r.Workspaces.For(logicalcluster.Name(req.ClusterName))
	if err != nil {
		return ctrl.Result{}, err
	}
	recorder, removalRecorder := ws.Recorder(c.Scheme(), ControllerName), ws.Recorder(c.Scheme(), removalsComponent)
	if !p.GetDeletionTimestamp().IsZero() {
		return r.delete(ctx, c, p, recorder, removalRecorder, req.String())
	}
	if controllerutil.AddFinalizer(p, finalizer(k)) {
		if err := c.Update(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
	}

	sel, resourceSnap, err := r.snapshotResources(ctx, c, ws, p, req, false)
	if notServed := (*kindNotServedError)(nil); errors.As(err, &notServed) {
		left, holding := r.unserved.hold(req.String(), time.Now(), r.unservedKindGrace())
		if holding {
			recorder.Event(p, corev1.EventTypeWarning, SelectedKindNotServedReason, fmt.Sprintf(
				"%v; the last resource snapshot is kept and nothing is removed from the member clusters for up to %s more, after which the kind is taken as gone", err, left.Round(time.Second)))
			return ctrl.Result{RequeueAfter: min(left, unservedRecheck)}, nil
		}
		sel, resourceSnap, err = r.snapshotResources(ctx, c, ws, p, req, true)
	} else if err == nil {
		r.unserved.forget(req.String())
	}
	if errors.Is(err, errInvalidSelectors) {
		recorder.Event(p, corev1.EventTypeWarning, placementv1beta1.InvalidResourceSelectorsReason, err.Error())
		return ctrl.Result{}, r.writeStatus(ctx, c, p, invalidSelectorsStatus(p, err))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	policySnap, err := r.ensurePolicySnapshot(ctx, c, p)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("snapshotting the scheduling policy of %s: %w", k, err)
	}
	bindings, err := placements.Bindings(ctx, c, k)
	if err != nil {
		return ctrl.Result{}, err
	}
	status := buildStatus(p, sel.selected, resourceSnap, policySnap, bindings)
	r.removals.report(removalRecorder, req.String(), p, removing(bindings))
	syncNamespaceStatus(ctx, c, p, &status)
	now := time.Now()
	r.rollouts.observe(req.String(), p, &status, now)
	return r.writeProgress(ctx, c, p, status, req.String(), now, recorder)
}

// writeProgress writes the status if it changed, holding back writes that
// only report the clusters' progress to one per progressInterval; a held
// back status is written by the reconcile it asks for.
func (r *Reconciler) writeProgress(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, status placementv1beta1.PlacementStatus,
	key string, now time.Time, recorder record.EventRecorder) (ctrl.Result, error) {
	from := p.GetResourceVersion()
	// Before comparing: a cached status from before the last write may equal
	// what is wanted now while the write put something else in its place.
	if r.statusWrites.behind(key, from, now) {
		// Its own status writes do not bring the placement back: look again
		// once the cache has had time to show the last one.
		return ctrl.Result{RequeueAfter: placements.ConflictRetry}, nil
	}
	if equality.Semantic.DeepEqual(*p.GetPlacementStatus(), status) {
		return ctrl.Result{}, nil
	}
	if onlyProgress(p.GetPlacementStatus(), &status) {
		if wait := r.statusWrites.wait(key, now); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	// Events go with the write that shows them: a write held back would
	// otherwise record them again at every reconcile until it lands.
	prev := p.GetPlacementStatus().Conditions
	if err := r.writeStatus(ctx, c, p, status); err != nil {
		return placements.RetryConflict(err)
	}
	r.statusWrites.wrote(key, now, from, p.GetResourceVersion())
	emitEvents(recorder, p, prev, status)
	return ctrl.Result{}, nil
}

// snapshotResources resolves what the placement selects and makes sure its
// latest resource snapshot holds that; the last selection is reused while
// it holds (see selections).
func (r *Reconciler) snapshotResources(ctx context.Context, c client.Client, ws *clients.Workspace, p placementv1beta1.PlacementObj,
	req mcreconcile.Request, dropUnserved bool) (selection, placementv1beta1.ResourceSnapshotObj, error) {
	k := placements.KeyOf(p)
	// Read before selecting: a change after this read makes the next
	// reconcile select again.
	var epoch uint64
	tracked := false
	if r.ResourceEpochs != nil {
		epoch, tracked = r.ResourceEpochs(logicalcluster.Name(req.ClusterName))
	}
	if sel, ok := r.selections.get(req.String(), p, epoch); ok && tracked {
		snap, err := reusedSnapshot(ctx, c, k, sel)
		if err != nil || snap != nil {
			return sel, snap, err
		}
	}
	objs, err := r.selectResources(ctx, ws, p, dropUnserved)
	if err != nil {
		return selection{}, nil, err
	}
	snap, err := r.ensureResourceSnapshot(ctx, c, p, objs)
	if err != nil {
		return selection{}, nil, fmt.Errorf("snapshotting the selected resources of %s: %w", k, err)
	}
	sel := selection{uid: p.GetUID(), generation: p.GetGeneration(), epoch: epoch,
		hash: snap.GetAnnotations()[placementv1beta1.ResourceGroupHashAnnotation], selected: selectedResources(objs)}
	if tracked {
		r.selections.put(req.String(), sel)
	}
	return sel, snap, nil
}

// selectResources resolves the placement's selectors, and holds a team
// workspace's placement to what teams may place.
func (r *Reconciler) selectResources(ctx context.Context, ws *clients.Workspace, p placementv1beta1.PlacementObj, dropUnserved bool) ([]*unstructured.Unstructured, error) {
	path, err := ws.Path(ctx)
	if err != nil {
		return nil, err
	}
	team := path != tenancyv1alpha1.FleetWorkspace
	if ns := p.GetNamespace(); ns != "" && (reservedNamespace(ns) || team && (teampolicy.Policy{ReservedNamespaces: r.TeamReservedNamespaces}).Reserved(ns)) {
		return nil, invalid("namespace %s is reserved on member clusters, so a ResourcePlacement in it places nothing; put the placement and its objects in a namespace of your own", ns)
	}
	s := &selector{ws: ws, previous: selectedKindsOf(p.GetPlacementStatus().SelectedResources), dropUnserved: dropUnserved}
	objs, err := s.selectResources(ctx, p.GetNamespace(), p.GetPlacementSpec().ResourceSelectors)
	if err != nil || !team {
		return objs, err
	}
	return objs, checkTeamObjects(objs, r.TeamReservedNamespaces)
}

func finalizer(k placements.Key) string {
	if k.Cluster() {
		return placementv1beta1.ClusterResourcePlacementCleanupFinalizer
	}
	return placementv1beta1.ResourcePlacementCleanupFinalizer
}

// delete waits until the scheduler and rollout have removed every binding
// (and with them the resources on the members), then lets the placement go;
// its snapshots are owned by it and garbage-collected. The clusters still
// being cleared are reported like rollout progress: each binding that goes
// changes only the message, so a placement over 100 clusters would
// otherwise write its status 100 times, most from a cache not yet showing
// the write before.
func (r *Reconciler) delete(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, recorder, removalRecorder record.EventRecorder,
	key string) (ctrl.Result, error) {
	k := placements.KeyOf(p)
	if !controllerutil.ContainsFinalizer(p, finalizer(k)) {
		return ctrl.Result{}, nil
	}
	bindings, err := placements.Bindings(ctx, c, k)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := time.Now()
	if len(bindings) > 0 {
		// Each binding's removal brings the placement back.
		r.removals.report(removalRecorder, key, p, removing(bindings))
		return ctrl.Result{}, nil
	}
	if r.statusWrites.behind(key, p.GetResourceVersion(), now) {
		return ctrl.Result{RequeueAfter: placements.ConflictRetry}, nil
	}
	controllerutil.RemoveFinalizer(p, finalizer(k))
	if err := c.Update(ctx, p); err != nil {
		return placements.RetryConflict(err)
	}
	recorder.Event(p, corev1.EventTypeNormal, placementv1beta1.PlacementCleanupFinalizerRemovedEventReason, "Deleted the snapshots and removed the placement cleanup finalizer")
	return ctrl.Result{}, nil
}
