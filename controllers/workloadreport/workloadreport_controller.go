// Package workloadreport writes, next to each placement in its workspace, a
// report of how the placed objects run on each cluster (ClusterWorkloadReport
// for a ClusterResourcePlacement, WorkloadReport for a ResourcePlacement),
// from what the members' syncers say in their Works' status; and, when the
// placement asks to mirror statuses to the original resources, copies the
// member's status onto the placed object in the workspace. A team reads how
// its workloads run without any access to the members, and nothing polls
// them: the syncers report on change, and the report is written on change.
package workloadreport

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
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

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/predicates"
	"github.com/fleetplane/fleetplane/controllers/common/works"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controllers in logs.
const ControllerName = "fleet-workloadreport"

// Workers is how many placements' reports are written at once.
const Workers = 4

// coalesce is how long a placement's report waits after a member reported
// on one of its Works, so that the reports of its clusters, which come in
// bursts, make one write.
const coalesce = time.Second

// Reconciler reconciles the workload reports of one kind of placement.
type Reconciler struct {
	Manager mcmanager.Manager
	// Home is where this shard keeps Work; its cache holds the Works.
	Home       cluster.Cluster
	Workspaces *clients.Factory
	placements.Scope
}

// SetupWithManager registers the controller: placements in every
// workspace, and Work in the shard's home mapped to the placement it was
// written for.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	return mcbuilder.ControllerManagedBy(mgr).
		Named(r.Name(ControllerName)).
		For(r.Sample().New(), mcbuilder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicates.DeletionStarted{}))).
		WatchesRawSource(works.Source(r.Home, r.toPlacement(), statusChanged{})).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: Workers}).
		Complete(metrics.Reconciler[mcreconcile.Request](r.Name(ControllerName), r))
}

// toPlacement maps a Work to its placement, after coalesce.
func (r *Reconciler) toPlacement() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(string, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		add := func(w client.Object, q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
			if req, ok := r.placementOf(w); ok {
				q.AddAfter(req, coalesce)
			}
		}
		return handler.TypedFuncs[client.Object, mcreconcile.Request]{
			CreateFunc: func(_ context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
				add(e.Object, q)
			},
			UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
				add(e.ObjectNew, q)
			},
			DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
				add(e.Object, q)
			},
		}
	}
}

// placementOf is the request of the placement a Work was written for.
func (r *Reconciler) placementOf(w client.Object) (mcreconcile.Request, bool) {
	l := w.GetLabels()
	ws, name, ns := l[placementv1beta1.WorkspaceLabel], l[placementv1beta1.PlacementTrackingLabel], l[placementv1beta1.ParentNamespaceLabel]
	if ws == "" || name == "" || (ns != "") != r.Namespaced {
		return mcreconcile.Request{}, false
	}
	return mcreconcile.Request{ClusterName: ws, Request: reconcile.Request{NamespacedName: r.Key(ns, name).NamespacedName()}}, true
}

// statusChanged passes Works appearing, going, and changing their status
// or generation; not the resyncs, nor the finalizer the syncer adds.
type statusChanged struct{ predicate.Funcs }

func (statusChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*placementv1beta1.Work), e.ObjectNew.(*placementv1beta1.Work)
	return o.Generation != n.Generation || !equality.Semantic.DeepEqual(o.Status, n.Status)
}

// Reconcile writes one placement's report, and mirrors statuses when it
// asks for that.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, p, err := r.Lookup(ctx, r.Manager, r.Workspaces, req)
	if err != nil || c == nil {
		return ctrl.Result{}, err
	}
	key := r.Key(req.Namespace, req.Name)
	if p == nil || !p.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.remove(ctx, c, key)
	}
	// Read only, so no copies of the cache's bindings and Works (but the
	// first Work of each, which is read by name).
	bindings, err := placements.Bindings(ctx, c, key, client.UnsafeDisableDeepCopy)
	if err != nil {
		return ctrl.Result{}, err
	}
	var clusters []clusterWorks
	for _, b := range bindings {
		ws, err := works.OfBinding(ctx, r.Home.GetClient(), req.ClusterName, b, client.UnsafeDisableDeepCopy)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(ws) > 0 {
			clusters = append(clusters, clusterWorks{cluster: b.GetBindingSpec().TargetCluster, works: ws})
		}
	}
	report := newReport(key)
	if err := c.Get(ctx, key.NamespacedName(), report); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	status := build(p, clusters, statusOf(report).Conditions)
	warnings := newWarnings(statusOf(report), &status)
	var mirrorErr error
	if mirrorsToOriginal(p) {
		mirrorErr = r.mirror(ctx, req.ClusterName, p, clusters, &status)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, placementv1beta1.WorkloadReportStatusBackReportedConditionType)
	}
	if err := r.write(ctx, c, p, report, status); err != nil {
		return ctrl.Result{}, err
	}
	// Once written: a report that failed to be written has its warnings
	// announced when it is.
	r.announce(ctx, req.ClusterName, p, warnings)
	return ctrl.Result{}, mirrorErr
}

// write creates or updates the report when what it says changed.
func (r *Reconciler) write(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, report client.Object, status placementv1beta1.WorkloadReportStatus) error {
	if report.GetUID() == "" {
		report.SetNamespace(p.GetNamespace())
		report.SetName(p.GetName())
		*statusOf(report) = status
		if err := controllerutil.SetOwnerReference(p, report, c.Scheme()); err != nil {
			return err
		}
		log.FromContext(ctx).V(2).Info("creating the workload report", "placement", placements.KeyOf(p), "objects", status.ObjectCount)
		return client.IgnoreAlreadyExists(c.Create(ctx, report))
	}
	if equality.Semantic.DeepEqual(*statusOf(report), status) {
		return nil
	}
	*statusOf(report) = status
	if err := c.Update(ctx, report); err != nil {
		_, err = placements.RetryConflict(err)
		return err
	}
	return nil
}

// remove deletes the report of a placement that is gone or going (its
// owner reference would have the garbage collector do it too, later).
func (r *Reconciler) remove(ctx context.Context, c client.Client, key placements.Key) error {
	report := newReport(key)
	report.SetNamespace(key.Namespace)
	report.SetName(key.Name)
	err := c.Delete(ctx, report)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// newReport is an empty report of the placement's kind.
func newReport(key placements.Key) client.Object {
	if key.Cluster() {
		return &placementv1beta1.ClusterWorkloadReport{}
	}
	return &placementv1beta1.WorkloadReport{}
}

// statusOf is the status of either kind of report.
func statusOf(report client.Object) *placementv1beta1.WorkloadReportStatus {
	return report.(placementv1beta1.WorkloadReportObj).GetWorkloadReportStatus()
}
