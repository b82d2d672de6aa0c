// Package scheduler runs the shared scheduler for every workspace: for each
// placement it feeds the latest scheduling-policy snapshot, the fleet's
// member clusters, the workspace's cluster grant and the existing bindings to
// the scheduling framework, and persists the result as bindings and as the
// decisions on the policy snapshot.
package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/predicates"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
)

// ControllerName names the controllers in logs.
const ControllerName = "fleet-scheduler"

// Reconciler schedules one kind of placement.
type Reconciler struct {
	Manager    mcmanager.Manager
	Framework  *framework.Framework
	Workspaces *clients.Factory
	placements.Scope

	// created holds the bindings created that the cache does not show yet.
	created *placements.UnseenWrites[workspacePlacement]
}

// workspacePlacement identifies a placement across workspaces.
type workspacePlacement struct {
	workspace string
	placement placements.Key
}

// SetupWithManager registers the controller. Besides the placement's own
// objects, changes of member clusters and grants (in root:fleet) reschedule
// every placement.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	k := r.Sample()
	r.created = &placements.UnseenWrites[workspacePlacement]{}
	fleetWide := []mcbuilder.WatchesOption{mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)}
	return mcbuilder.ControllerManagedBy(mgr).
		Named(r.Name(ControllerName)).
		For(k.New(), mcbuilder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicates.DeletionStarted{}))).
		Watches(k.NewPolicySnapshot(), mchandler.EnqueueRequestsFromMapFunc(placements.ToPlacement), mcbuilder.WithPredicates(latestSnapshot{})).
		Watches(k.NewBinding(), mchandler.EnqueueRequestsFromMapFunc(placements.ToPlacement), mcbuilder.WithPredicates(bindingEvents{created: r.created})).
		Watches(&clusterv1beta1.MemberCluster{}, r.allPlacements(), append(fleetWide, mcbuilder.WithPredicates(schedulingRelevant{}))...).
		Watches(&tenancyv1alpha1.ClusterGrant{}, r.allPlacements(), append(fleetWide, mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{}))...).
		Complete(metrics.Reconciler[mcreconcile.Request](r.Name(ControllerName), r))
}

// Reconcile runs one scheduling cycle for a placement.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, p, err := r.Lookup(ctx, r.Manager, r.Workspaces, req)
	if err != nil || p == nil {
		if p == nil && err == nil {
			// Gone, or its workspace is: creations whose outcome was
			// unknown are no longer waited for.
			r.created.Forget(workspacePlacement{req.ClusterName, r.Key(req.Namespace, req.Name)})
		}
		return ctrl.Result{}, err
	}
	k := placements.KeyOf(p)
	bindings, err := placements.Bindings(ctx, c, k)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait := r.created.Wait(workspacePlacement{req.ClusterName, k}, bindings); wait > 0 {
		// Shown by the binding's creation event; the wait bounds a miss.
		log.FromContext(ctx).V(1).Info("waiting for the cache to show the bindings created for the placement", "placement", k)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if !p.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.unscheduleAll(ctx, req.ClusterName, c, p, bindings)
	}
	if controllerutil.AddFinalizer(p, placementv1beta1.SchedulerCleanupFinalizer) {
		if err := c.Update(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	snap, err := placements.LatestPolicySnapshot(ctx, c, k)
	if err != nil || snap == nil {
		// The placement controller creates it; its creation triggers us.
		return ctrl.Result{}, err
	}
	start := time.Now()
	err = r.schedule(ctx, req.ClusterName, c, p, snap, bindings)
	observeCycle(start, err)
	return ctrl.Result{}, err
}

// schedule decides where the placement goes and records the decisions.
func (r *Reconciler) schedule(ctx context.Context, clusterName string, c client.Client, p placementv1beta1.PlacementObj,
	snap placementv1beta1.PolicySnapshotObj, bindings []placementv1beta1.BindingObj) error {
	in, err := r.input(ctx, clusterName, placements.KeyOf(p), snap, bindings)
	if err != nil {
		return err
	}
	res, err := r.Framework.Schedule(ctx, in)
	if err != nil {
		return fmt.Errorf("scheduling %s: %w", in.Placement, err)
	}
	if err := r.persistBindings(ctx, clusterName, c, p, snap, bindings, res); err != nil {
		return err
	}
	changed, err := r.writeDecisions(ctx, c, snap, res)
	if changed {
		placements.Decisions(ctx, r.Workspaces, clusterName, placements.KeyOf(p)).Info("scheduled",
			"policySnapshot", snap.GetName(), "fulfilled", res.Fulfilled, "reason", res.Reason, "message", res.Message)
	}
	return err
}

// input gathers what the framework needs for one cycle.
func (r *Reconciler) input(ctx context.Context, clusterName string, k placements.Key, snap placementv1beta1.PolicySnapshotObj, bindings []placementv1beta1.BindingObj) (framework.Input, error) {
	local := r.Manager.GetLocalManager().GetClient()
	// The cache's own objects, not copies: the framework only reads them,
	// and copying 1,000 member clusters was most of a cycle's cost.
	list := &clusterv1beta1.MemberClusterList{}
	if err := local.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return framework.Input{}, err
	}
	ws, err := r.Workspaces.For(logicalcluster.Name(clusterName))
	if err != nil {
		return framework.Input{}, err
	}
	path, err := ws.Path(ctx)
	if err != nil {
		return framework.Input{}, err
	}
	access, err := (&tenancy.Grants{Reader: local}).For(ctx, path)
	if err != nil {
		return framework.Input{}, err
	}
	in := framework.Input{
		Placement:          path.String() + "/" + k.String(),
		Namespace:          k.Namespace,
		PolicySnapshotName: snap.GetName(),
		Policy:             snap.GetPolicySnapshotSpec().Policy,
		Granted:            access.Granted,
		Now:                time.Now(),
	}
	in.NumberOfClusters, _ = strconv.Atoi(snap.GetAnnotations()[placementv1beta1.NumberOfClustersAnnotation])
	for i := range list.Items {
		in.Clusters = append(in.Clusters, &list.Items[i])
	}
	for _, b := range bindings {
		if !b.GetDeletionTimestamp().IsZero() {
			continue
		}
		spec := b.GetBindingSpec()
		in.Bindings = append(in.Bindings, framework.Binding{
			Name: b.GetName(), TargetCluster: spec.TargetCluster, SchedulingPolicySnapshotName: spec.SchedulingPolicySnapshotName,
			State: spec.State, ClusterDecision: spec.ClusterDecision,
		})
	}
	return in, nil
}

// persistBindings creates, updates and unschedules bindings as decided.
func (r *Reconciler) persistBindings(ctx context.Context, clusterName string, c client.Client, p placementv1beta1.PlacementObj, snap placementv1beta1.PolicySnapshotObj,
	bindings []placementv1beta1.BindingObj, res framework.Result) error {
	byName := map[string]placementv1beta1.BindingObj{}
	for _, b := range bindings {
		byName[b.GetName()] = b
	}
	k := placements.KeyOf(p)
	decisions := placements.Decisions(ctx, r.Workspaces, clusterName, k)
	// New bindings are independent writes: a PickN(100) placement must not
	// wait for 100 round trips one after another. One refused does not stop
	// the others: a cancelled creation's outcome would be unknown.
	var g errgroup.Group
	g.SetLimit(placements.ParallelWrites)
	for _, d := range res.Create {
		b := k.NewBinding()
		b.SetName(bindingName(p.GetName(), d.ClusterName))
		b.SetLabels(map[string]string{placementv1beta1.PlacementTrackingLabel: p.GetName()})
		// Created with the work generator's finalizer: it would otherwise
		// write every new binding once just to add it (racing the rollout).
		b.SetFinalizers([]string{placementv1beta1.WorkFinalizer})
		b.SetBindingSpec(placementv1beta1.ResourceBindingSpec{
			State: placementv1beta1.BindingStateScheduled, TargetCluster: d.ClusterName,
			SchedulingPolicySnapshotName: snap.GetName(), ClusterDecision: d,
		})
		if err := controllerutil.SetControllerReference(p, b, c.Scheme()); err != nil {
			return err
		}
		r.created.Created(workspacePlacement{clusterName, k}, b.GetName())
		decisions.Info("picked a cluster", "cluster", d.ClusterName, "binding", b.GetName(), "reason", d.Reason)
		g.Go(func() error {
			if err := c.Create(ctx, b); err != nil {
				r.created.CreateFailed(workspacePlacement{clusterName, k}, b.GetName(), err)
				return fmt.Errorf("binding %s to cluster %s: %w", k, d.ClusterName, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, u := range res.Patch {
		b, ok := byName[u.Name]
		if !ok {
			continue
		}
		spec := b.GetBindingSpec().DeepCopy()
		spec.SchedulingPolicySnapshotName, spec.ClusterDecision = snap.GetName(), u.Decision
		if u.Reschedule {
			spec.State = previousState(b)
			decisions.Info("picked a cluster again", "cluster", spec.TargetCluster, "binding", b.GetName(), "reason", u.Decision.Reason)
		}
		if err := r.updateSpec(ctx, c, b, *spec); err != nil {
			return err
		}
	}
	for _, name := range res.Unschedule {
		b, ok := byName[name]
		if !ok || b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			continue
		}
		ann := b.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[placementv1beta1.PreviousBindingStateAnnotation] = string(b.GetBindingSpec().State)
		b.SetAnnotations(ann)
		spec := b.GetBindingSpec().DeepCopy()
		spec.State = placementv1beta1.BindingStateUnscheduled
		decisions.Info("dropped a cluster", "cluster", spec.TargetCluster, "binding", b.GetName(), "reason", droppedBecause(res.Decisions, spec.TargetCluster))
		if err := r.updateSpec(ctx, c, b, *spec); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) updateSpec(ctx context.Context, c client.Client, b placementv1beta1.BindingObj, spec placementv1beta1.ResourceBindingSpec) error {
	if equality.Semantic.DeepEqual(*b.GetBindingSpec(), spec) {
		return nil
	}
	b.SetBindingSpec(spec)
	return c.Update(ctx, b)
}

func previousState(b placementv1beta1.BindingObj) placementv1beta1.BindingState {
	if s := b.GetAnnotations()[placementv1beta1.PreviousBindingStateAnnotation]; s == string(placementv1beta1.BindingStateBound) {
		return placementv1beta1.BindingStateBound
	}
	return placementv1beta1.BindingStateScheduled
}

// bindingName is unique per placement and cluster; the suffix keeps a new
// binding from colliding with one still being deleted. It is a label value
// on the binding's Works, so it fits in 63 characters: long placement and
// cluster names are cut, the cluster's to no less than half the room.
func bindingName(placement, cluster string) string {
	suffix := rand.String(8)
	room := validation.DNS1123LabelMaxLength - len(suffix) - 2
	cluster = cluster[:min(len(cluster), max(room/2, room-len(placement)))]
	placement = placement[:min(len(placement), room-len(cluster))]
	// A cut may end on a dot ("team.-member-1") that no name allows.
	return strings.TrimRight(placement, ".-") + "-" + strings.TrimRight(cluster, ".-") + "-" + suffix
}

// droppedBecause is the scheduler's reason for not picking cluster again.
func droppedBecause(decisions []placementv1beta1.ClusterDecision, cluster string) string {
	for _, d := range decisions {
		if d.ClusterName == cluster && !d.Selected {
			return d.Reason
		}
	}
	return "the policy no longer picks it"
}

// writeDecisions records the result on the policy snapshot when it changed.
func (r *Reconciler) writeDecisions(ctx context.Context, c client.Client, snap placementv1beta1.PolicySnapshotObj, res framework.Result) (bool, error) {
	gen, _ := strconv.ParseInt(snap.GetAnnotations()[placementv1beta1.CRPGenerationAnnotation], 10, 64)
	st := snap.GetPolicySnapshotStatus().DeepCopy()
	st.ObservedCRPGeneration = gen
	st.ClusterDecisions = res.Decisions
	status := metav1.ConditionFalse
	if res.Fulfilled {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: string(placementv1beta1.PerClusterScheduledConditionType), Status: status,
		Reason: res.Reason, Message: res.Message, ObservedGeneration: snap.GetGeneration(),
	})
	if equality.Semantic.DeepEqual(*snap.GetPolicySnapshotStatus(), *st) {
		return false, nil
	}
	snap.SetPolicySnapshotStatus(*st)
	return true, c.Status().Update(ctx, snap)
}

// unscheduleAll removes every binding of a deleted placement (the work
// generator then removes what they placed) and releases the placement.
func (r *Reconciler) unscheduleAll(ctx context.Context, clusterName string, c client.Client, p placementv1beta1.PlacementObj, bindings []placementv1beta1.BindingObj) error {
	if !controllerutil.ContainsFinalizer(p, placementv1beta1.SchedulerCleanupFinalizer) {
		return nil
	}
	decisions := placements.Decisions(ctx, r.Workspaces, clusterName, placements.KeyOf(p))
	for _, b := range bindings {
		if b.GetDeletionTimestamp().IsZero() {
			decisions.Info("removing a binding of the deleted placement", "cluster", b.GetBindingSpec().TargetCluster, "binding", b.GetName())
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, b)); err != nil {
			return err
		}
	}
	if len(bindings) > 0 {
		return nil
	}
	controllerutil.RemoveFinalizer(p, placementv1beta1.SchedulerCleanupFinalizer)
	return c.Update(ctx, p)
}
