// Package workgenerator turns bound bindings into Work for member clusters:
// for each binding that the rollout has moved to a resource snapshot, it
// writes one Work per snapshot shard into the shard's home of Work
// (root:fleet on a hub of one shard), namespace fleet-member-<cluster>, and
// reports the Works' progress back on the binding.
package workgenerator

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/predicates"
	"github.com/fleetplane/fleetplane/controllers/common/works"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controllers in logs.
const ControllerName = "fleet-workgenerator"

// Workers is how many bindings are synced at once.
const Workers = 16

// Reconciler reconciles the bindings of one kind of placement.
type Reconciler struct {
	Manager mcmanager.Manager
	// Fleet reads members and grants in root:fleet.
	Fleet client.Reader
	// Home is where this shard keeps Work: its client writes the Works,
	// its cache holds them.
	Home cluster.Cluster
	// Workspaces resolves a workspace's path, which its grants name.
	Workspaces *clients.Factory
	// TeamReservedNamespaces are the member namespaces team placements may
	// not touch beyond teampolicy.ReservedNamespaces (the hub's
	// --team-reserved-namespaces).
	TeamReservedNamespaces []string
	placements.Scope
	recent *recentWrites
}

// SetupWithManager registers the controller: bindings in every workspace,
// and Work in the shard's home mapped back to the binding it was written for.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	r.recent = newRecentWrites(clock.RealClock{})
	return mcbuilder.ControllerManagedBy(mgr).
		Named(r.Name(ControllerName)).
		For(r.Sample().NewBinding(), mcbuilder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicates.DeletionStarted{}))).
		WatchesRawSource(works.Source(r.Home, r.toBindings(), workChanged{})).
		Watches(r.Sample().New(), r.placementBindings(),
			mcbuilder.WithPredicates(reportBackChanged{})).
		Watches(&tenancyv1alpha1.ClusterGrant{}, r.unsyncedBindings(),
			mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Bindings are independent (one binding is never reconciled twice
		// at once): a placement's 100 bindings are written side by side.
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: Workers}).
		Complete(metrics.Reconciler[mcreconcile.Request](r.Name(ControllerName), r))
}

// unsyncedBindings enqueues, when a grant changes, the bindings whose Work
// could not be written: a grant may now allow what was refused.
func (r *Reconciler) unsyncedBindings() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(string, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcreconcile.Request {
			var list placementv1beta1.BindingListObj = &placementv1beta1.ClusterResourceBindingList{}
			if r.Namespaced {
				list = &placementv1beta1.ResourceBindingList{}
			}
			if err := placements.ListEverywhere(ctx, r.Manager, list); err != nil {
				log.FromContext(ctx).Error(err, "listing bindings after a ClusterGrant changed; refused bindings are retried with backoff")
				return nil
			}
			var out []mcreconcile.Request
			for _, b := range list.GetBindingObjs() {
				if meta.IsStatusConditionFalse(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingWorkSynchronized)) {
					out = append(out, placements.RequestFor(b))
				}
			}
			return out
		})
	}
}

// toBindings maps a Work in root:fleet to the binding, in its workspace,
// that the Work was written for; a Work that is gone also to the other
// bindings of its placement on the same cluster. A cluster picked again
// while the Work of its earlier binding was being removed has a new
// binding whose Work has the same name: it is written once the old is gone.
func (r *Reconciler) toBindings() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(string, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		owner := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, w client.Object) []mcreconcile.Request {
			if req, ok := r.bindingOf(w); ok {
				return []mcreconcile.Request{req}
			}
			return nil
		})
		return handler.TypedFuncs[client.Object, mcreconcile.Request]{
			CreateFunc: owner.Create, UpdateFunc: owner.Update, GenericFunc: owner.Generic,
			DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
				owner.Delete(ctx, e, q)
				for _, req := range r.successors(ctx, e.Object) {
					q.Add(req)
				}
			},
		}
	}
}

// reportBackChanged passes placements whose reportBackStrategy changed:
// their Works carry it. (Other changes of a placement reach its bindings
// through the rollout.)
type reportBackChanged struct{ predicate.Funcs }

func (reportBackChanged) Create(event.CreateEvent) bool   { return false }
func (reportBackChanged) Delete(event.DeleteEvent) bool   { return false }
func (reportBackChanged) Generic(event.GenericEvent) bool { return false }
func (reportBackChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(placementv1beta1.PlacementObj), e.ObjectNew.(placementv1beta1.PlacementObj)
	return !equality.Semantic.DeepEqual(reportBackOf(o), reportBackOf(n))
}

// placementBindings maps a placement to its bindings, in its workspace.
func (r *Reconciler) placementBindings() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(clusterName string, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, p client.Object) []mcreconcile.Request {
			bindings, err := placements.Bindings(ctx, cl.GetCache(), placements.KeyOf(p), client.UnsafeDisableDeepCopy)
			if err != nil {
				log.FromContext(ctx).Error(err, "listing the bindings of a placement whose reportBackStrategy changed; its Works carry the old one until they are written again",
					"workspace", clusterName, "placement", placements.KeyOf(p))
				return nil
			}
			out := make([]mcreconcile.Request, 0, len(bindings))
			for _, b := range bindings {
				out = append(out, mcreconcile.Request{ClusterName: clusterName, Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)}})
			}
			return out
		})
	}
}

// bindingOf is the request of the binding a Work was written for.
func (r *Reconciler) bindingOf(w client.Object) (mcreconcile.Request, bool) {
	l := w.GetLabels()
	ws, binding := l[placementv1beta1.WorkspaceLabel], l[placementv1beta1.ParentBindingLabel]
	ns := l[placementv1beta1.ParentNamespaceLabel]
	if ws == "" || binding == "" || (ns != "") != r.Namespaced {
		return mcreconcile.Request{}, false
	}
	return mcreconcile.Request{ClusterName: ws, Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: binding}}}, true
}

// successors are the bindings, other than its own, of a deleted Work's
// placement to the Work's cluster, read from the workspace's cache.
func (r *Reconciler) successors(ctx context.Context, w client.Object) []mcreconcile.Request {
	own, ok := r.bindingOf(w)
	if !ok {
		return nil
	}
	key := placements.Key{Namespace: own.Namespace, Name: w.GetLabels()[placementv1beta1.PlacementTrackingLabel]}
	cl, err := r.Manager.GetCluster(ctx, own.ClusterName)
	if err != nil {
		log.FromContext(ctx).V(1).Info("a deleted Work's workspace is gone", "workspace", own.ClusterName, "placement", key, "error", err.Error())
		return nil
	}
	// Only names and targets are read: no copy of every binding of a large
	// placement for each of its Works.
	bindings, err := placements.Bindings(ctx, cl.GetCache(), key, client.UnsafeDisableDeepCopy)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the bindings of a placement after one of its Works was deleted; a binding waiting for it is retried with backoff", "placement", key)
		return nil
	}
	var out []mcreconcile.Request
	for _, b := range bindings {
		if b.GetName() != own.Name && w.GetNamespace() == fmt.Sprintf(clusterv1beta1.NamespaceNameFormat, b.GetBindingSpec().TargetCluster) {
			out = append(out, mcreconcile.Request{ClusterName: own.ClusterName, Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)}})
		}
	}
	return out
}

// Reconcile writes or removes one binding's Work and reports its progress.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := placements.WorkspaceClient(ctx, r.Manager, r.Workspaces, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, placements.IgnoreWorkspaceGone(err)
	}
	b := r.Key(req.Namespace, req.Name).NewBinding()
	if err := c.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	origin := origin{workspace: logicalcluster.Name(req.ClusterName), binding: b}
	if !b.GetDeletionTimestamp().IsZero() {
		ws, err := r.Workspaces.For(origin.workspace)
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.cleanUp(ctx, c, ws.Client, origin)
	}
	if controllerutil.AddFinalizer(b, placementv1beta1.WorkFinalizer) {
		if err := c.Update(ctx, b); err != nil {
			return ctrl.Result{}, err
		}
	}
	spec := b.GetBindingSpec()
	var works []placementv1beta1.Work
	var written bool
	var syncErr error
	switch {
	case spec.ResourceSnapshotName == "" || spec.State == placementv1beta1.BindingStateScheduled:
		// Not rolled out yet: the rollout decides when.
		return ctrl.Result{}, nil
	case spec.State == placementv1beta1.BindingStateUnscheduled:
		// Being removed, within the rollout's limits: the Works stay as they
		// are until then, and so does the report of whether they are
		// available, which the rollout counts on.
		works, syncErr = r.existingWorks(ctx, origin)
		if syncErr != nil || len(works) == 0 {
			return ctrl.Result{}, syncErr
		}
	default:
		works, written, syncErr = r.render(ctx, c, origin)
		if errors.Is(syncErr, errOverridesGone) {
			// An override the binding names was deleted: until the rollout
			// moves the binding on, within its limits, the Works stay as
			// they are, and so does their report.
			works, syncErr = r.existingWorks(ctx, origin)
			if syncErr != nil || len(works) == 0 {
				return ctrl.Result{}, syncErr
			}
		}
	}
	status := bindingStatus(b, works, syncErr)
	if written {
		r.recent.note(req)
	}
	if wait := r.recent.wait(req, b, status); wait > 0 {
		// The member reports on the Works just written in a moment; the
		// binding's status is written with its report.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if !equality.Semantic.DeepEqual(status, *b.GetBindingStatus()) {
		b.SetBindingStatus(status)
		if err := c.Status().Update(ctx, b); err != nil {
			return placements.RetryConflict(err)
		}
	}
	return ctrl.Result{}, syncErr
}

// errOverridesGone says that an override snapshot a binding names is gone.
var errOverridesGone = errors.New("an override snapshot the binding names is gone")

// render writes the binding's Works once its origin is trusted and its
// overrides are read, and tells whether it wrote any.
func (r *Reconciler) render(ctx context.Context, c client.Client, o origin) ([]placementv1beta1.Work, bool, error) {
	t, err := r.trust(ctx, c, o)
	if err != nil {
		return nil, false, err
	}
	spec := o.binding.GetBindingSpec()
	ov, err := overrides.Load(ctx, c, spec.ClusterResourceOverrideSnapshots, spec.ResourceOverrideSnapshots)
	if apierrors.IsNotFound(err) {
		return nil, false, errOverridesGone
	}
	if err != nil {
		return nil, false, overrideFailure{err}
	}
	works, written, err := r.syncWorks(ctx, o, t, ov)
	if written {
		r.decisions(ctx, o).Info("wrote the binding's Works", "resourceSnapshot", spec.ResourceSnapshotName, "works", len(works))
	}
	return works, written, err
}

// cleanUp deletes the binding's Work and releases the binding once it is
// gone; the member's syncer removes what the Work applied first. Whether
// the placement is deleted is read from the API server (direct): a cache
// that has not seen the deletion yet would turn Abandon into Delete.
func (r *Reconciler) cleanUp(ctx context.Context, c client.Client, direct client.Reader, o origin) error {
	if !controllerutil.ContainsFinalizer(o.binding, placementv1beta1.WorkFinalizer) {
		return nil
	}
	works, err := r.existingWorks(ctx, o)
	if err != nil {
		return err
	}
	abandon, err := abandoning(ctx, c, direct, o, works)
	if err != nil {
		return err
	}
	for i := range works {
		if abandon && works[i].Annotations[placementv1beta1.DeletePropagationAnnotation] != string(placementv1beta1.DeletePropagationPolicyAbandon) {
			works[i].Annotations = merged(works[i].Annotations, map[string]string{placementv1beta1.DeletePropagationAnnotation: string(placementv1beta1.DeletePropagationPolicyAbandon)})
			if err := r.Home.GetClient().Update(ctx, &works[i]); err != nil {
				return err
			}
		}
		if !works[i].DeletionTimestamp.IsZero() {
			// Deleted already; it goes once the member let go of what it
			// placed, and each of its updates until then brings the
			// binding back here.
			continue
		}
		r.decisions(ctx, o).Info("deleting a Work of a removed binding: the member removes what it placed", "work", works[i].Name, "abandon", abandon)
		if err := client.IgnoreNotFound(r.Home.GetClient().Delete(ctx, &works[i])); err != nil {
			return fmt.Errorf("deleting Work %s/%s: %w", works[i].Namespace, works[i].Name, err)
		}
	}
	if len(works) > 0 {
		// Called again when the Works are gone.
		return nil
	}
	r.decisions(ctx, o).Info("released a removed binding: its Works are gone")
	controllerutil.RemoveFinalizer(o.binding, placementv1beta1.WorkFinalizer)
	return c.Update(ctx, o.binding)
}

// abandoning tells whether the binding goes away because its placement is
// deleted with deleteStrategy Abandon: the members then keep what it placed.
// A placement that is already gone (force-deleted) has its strategy read
// from what its Works recorded; a cluster unpicked from a live placement is
// cleaned up. The placement is read from the API server (direct) unless the
// cache has seen its deletion already: a cache that has not would turn
// Abandon into Delete. (Reading it directly for each of a large placement's
// bindings, as it is deleted, was most of the cost of deleting it.)
func abandoning(ctx context.Context, cached, direct client.Reader, o origin, works []placementv1beta1.Work) (bool, error) {
	key := placements.Key{Namespace: o.binding.GetNamespace(), Name: o.placement()}
	p, err := placements.Peek(ctx, cached, key)
	if err != nil || p.GetDeletionTimestamp().IsZero() {
		p, err = placements.Get(ctx, direct, key)
	}
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	if err == nil {
		return !p.GetDeletionTimestamp().IsZero() && deleteStrategyOf(p) == placementv1beta1.DeletePropagationPolicyAbandon, nil
	}
	for _, w := range works {
		if w.Annotations[placementv1beta1.PlacementDeleteStrategyAnnotation] == string(placementv1beta1.DeletePropagationPolicyAbandon) {
			return true, nil
		}
	}
	return false, nil
}

// origin identifies where a binding comes from.
type origin struct {
	workspace logicalcluster.Name
	binding   placementv1beta1.BindingObj
}

// decisions logs what is decided about the binding's Works (placements.Decisions).
func (r *Reconciler) decisions(ctx context.Context, o origin) logr.Logger {
	k := placements.Key{Namespace: o.binding.GetNamespace(), Name: o.placement()}
	return placements.Decisions(ctx, r.Workspaces, o.workspace.String(), k).WithValues("cluster", o.binding.GetBindingSpec().TargetCluster, "binding", o.binding.GetName())
}

func (o origin) placement() string {
	return o.binding.GetLabels()[placementv1beta1.PlacementTrackingLabel]
}

func (o origin) memberNamespace() string {
	return works.MemberNamespace(o.binding)
}

func (o origin) workPrefix() string {
	return works.Prefix(o.workspace.String(), o.binding.GetNamespace(), o.placement())
}

func (o origin) labels() map[string]string {
	return map[string]string{
		placementv1beta1.WorkspaceLabel:         o.workspace.String(),
		placementv1beta1.PlacementTrackingLabel: o.placement(),
		placementv1beta1.ParentBindingLabel:     o.binding.GetName(),
		placementv1beta1.ParentNamespaceLabel:   o.binding.GetNamespace(),
	}
}

// existingWorks reads the Works written for the binding.
func (r *Reconciler) existingWorks(ctx context.Context, o origin) ([]placementv1beta1.Work, error) {
	return works.OfBinding(ctx, r.Home.GetClient(), o.workspace.String(), o.binding)
}
