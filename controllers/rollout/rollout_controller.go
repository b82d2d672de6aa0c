// Package rollout moves a placement's bindings to its latest resource
// snapshot within the rolling-update limits: at most maxUnavailable of the
// target clusters unavailable at a time, at most maxSurge extra clusters
// while new ones are added, and unavailablePeriodSeconds of waiting for
// resources whose availability cannot be tracked. Unscheduled bindings are
// removed under the same limits. Placements with strategy External are left
// to staged update runs.
package rollout

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controllers in logs.
const ControllerName = "fleet-rollout"

// Defaults of the rolling update, as KubeFleet's.
var (
	defaultMaxUnavailable = intstr.FromString("25%")
	defaultMaxSurge       = intstr.FromString("25%")
)

const defaultUnavailablePeriod = 60 * time.Second

// Reconciler rolls out one kind of placement.
type Reconciler struct {
	Manager    mcmanager.Manager
	Workspaces *clients.Factory
	// Fleet reads MemberClusters in root:fleet, whose labels decide which
	// override rules apply to them.
	Fleet client.Reader
	placements.Scope

	// written holds the binding writes the cache does not show yet.
	written placements.UnseenWrites[string]
}

// SetupWithManager registers the controller: placements, their bindings
// (new decisions and progress), resource snapshots (new content) and
// override snapshots (new overrides).
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	k := r.Sample()
	b := mcbuilder.ControllerManagedBy(mgr).
		Named(r.Name(ControllerName)).
		For(k.New(), mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(k.NewBinding(), mchandler.EnqueueRequestsFromMapFunc(placements.ToPlacement)).
		Watches(k.NewResourceSnapshot(), mchandler.EnqueueRequestsFromMapFunc(placements.ToPlacement)).
		Watches(&placementv1beta1.ResourceOverrideSnapshot{}, r.overridden()).
		Watches(&clusterv1beta1.MemberCluster{}, r.relabelled(), mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(relabelling))
	if !r.Namespaced {
		// ClusterResourceOverrides serve ClusterResourcePlacements only.
		b = b.Watches(&placementv1beta1.ClusterResourceOverrideSnapshot{}, r.overridden())
	}
	return b.Complete(metrics.Reconciler[mcreconcile.Request](r.Name(ControllerName), r))
}

// relabelling passes label changes of existing member clusters only.
var relabelling = predicate.Funcs{
	UpdateFunc:  predicate.LabelChangedPredicate{}.Update,
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// Reconcile advances one placement's rollout by as much as its strategy allows.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, p, err := r.Lookup(ctx, r.Manager, r.Workspaces, req)
	if err != nil || p == nil {
		if err == nil {
			r.written.Forget(req.String())
		}
		return ctrl.Result{}, err
	}
	k := placements.KeyOf(p)
	strategy := p.GetPlacementSpec().Strategy
	if strategy.Type == placementv1beta1.ExternalRolloutStrategyType || !p.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	latest, err := placements.LatestResourceSnapshot(ctx, c, k)
	if err != nil || latest == nil {
		return ctrl.Result{}, err
	}
	bindings, err := placements.Bindings(ctx, c, k)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Until the cache shows this controller's last writes, the bindings it
	// lists are not what the limits must be counted on: a binding just bound
	// would look unbound, and another would be bound past maxSurge. It plans
	// on what it wrote instead: waiting for the cache held each batch of
	// bindings back until the last write of the one before showed, a third
	// of a PickN(100) placement's time at 1,000 members.
	bindings, _ = r.written.Overlay(req.String(), bindings)
	want, err := ApplicableOverrides(ctx, r.Fleet, c, k, latest, bindings)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan := planRollout(time.Now(), p, latest.GetName(), want, bindings)
	decisions := placements.Decisions(ctx, r.Workspaces, req.ClusterName, k)
	for _, b := range plan.remove {
		decisions.Info("removing the binding of a cluster the scheduler dropped", "cluster", b.GetBindingSpec().TargetCluster, "binding", b.GetName())
		if err := client.IgnoreNotFound(c.Delete(ctx, b)); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, b := range plan.update {
		decisions.Info("rolling out", "cluster", b.GetBindingSpec().TargetCluster, "binding", b.GetName(), "resourceSnapshot", latest.GetName(),
			"from", b.GetBindingSpec().ResourceSnapshotName)
	}
	if err := r.bindAll(ctx, c, p, plan.update, latest.GetName(), want, req.String()); err != nil {
		return placements.RetryConflict(err)
	}
	for _, b := range plan.current {
		// The work generator reports a bound binding's rollout started, in
		// the status write it makes anyway; only a "waiting" this
		// controller reported earlier for the same generation is undone here.
		if !waitingReported(b) {
			continue
		}
		if err := markRolloutStarted(ctx, c, b, metav1.ConditionTrue, placementv1beta1.RolloutStartedReason, placements.RolloutStartedMessage(b)); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, b := range plan.blocked {
		if !waitingReported(b) {
			decisions.Info("the rollout waits for room under maxUnavailable or maxSurge", "cluster", b.GetBindingSpec().TargetCluster, "binding", b.GetName())
		}
		if err := markRolloutStarted(ctx, c, b, metav1.ConditionFalse, placementv1beta1.RolloutNotStartedYetReason,
			"The rollout is waiting: updating this cluster now would exceed the placement's maxUnavailable or maxSurge"); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: plan.recheck}, nil
}

// bindAll binds the bindings side by side: rolling out to 100 clusters must
// not wait for 100 round trips one after another. One binding's error (a
// conflict, when the cache is behind) does not cancel the others' writes.
func (r *Reconciler) bindAll(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, bindings []placementv1beta1.BindingObj, snapshot string,
	want map[string]overrides.Applicable, key string) error {
	var g errgroup.Group
	g.SetLimit(placements.ParallelWrites)
	for _, b := range bindings {
		g.Go(func() error {
			from := b.GetResourceVersion()
			if err := Bind(ctx, c, b, snapshot, want[b.GetBindingSpec().TargetCluster], p.GetPlacementSpec().Strategy.ApplyStrategy); err != nil {
				return err
			}
			r.written.Updated(key, b, from)
			return nil
		})
	}
	return g.Wait()
}

// Bind moves a binding to a resource snapshot, its overrides and an apply
// strategy; the work generator then reports the rollout started, with the
// Work.
func Bind(ctx context.Context, c client.Client, b placementv1beta1.BindingObj, snapshot string, o overrides.Applicable, strategy *placementv1beta1.ApplyStrategy) error {
	spec := b.GetBindingSpec().DeepCopy()
	spec.State = placementv1beta1.BindingStateBound
	spec.ResourceSnapshotName = snapshot
	spec.ClusterResourceOverrideSnapshots, spec.ResourceOverrideSnapshots = o.Cluster, o.Namespaced
	spec.ApplyStrategy = strategy.DeepCopy()
	b.SetBindingSpec(*spec)
	if err := c.Update(ctx, b); err != nil {
		return fmt.Errorf("rolling %s out to %s: %w", snapshot, spec.TargetCluster, err)
	}
	return nil
}

// waitingReported tells whether this controller reported the binding's
// rollout as waiting, for its current generation.
func waitingReported(b placementv1beta1.BindingObj) bool {
	c := meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingRolloutStarted))
	return c != nil && c.ObservedGeneration == b.GetGeneration() && c.Status == metav1.ConditionFalse
}

func markRolloutStarted(ctx context.Context, c client.Client, b placementv1beta1.BindingObj, status metav1.ConditionStatus, reason, msg string) error {
	st := b.GetBindingStatus().DeepCopy()
	changed := meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: string(placementv1beta1.ResourceBindingRolloutStarted), Status: status, Reason: reason, Message: msg, ObservedGeneration: b.GetGeneration(),
	})
	if !changed {
		return nil
	}
	b.SetBindingStatus(*st)
	return c.Status().Update(ctx, b)
}

// plan is what one rollout step does.
type plan struct {
	// current are bound to the latest snapshot already.
	current []placementv1beta1.BindingObj
	remove  []placementv1beta1.BindingObj
	update  []placementv1beta1.BindingObj
	blocked []placementv1beta1.BindingObj
	// recheck is when bindings with untrackable resources may count as available.
	recheck time.Duration
}

// planRollout picks which bindings to remove, bind or update now:
//   - bindings that are unavailable anyway are acted on at once (updating
//     them cannot make things worse);
//   - removing or updating an available binding needs room under
//     maxUnavailable: at least target-maxUnavailable bindings stay available;
//   - adding a cluster needs room under maxSurge: at most target+maxSurge
//     bindings are bound. In-place updates never surge.
func planRollout(now time.Time, p placementv1beta1.PlacementObj, latest string, want map[string]overrides.Applicable, bindings []placementv1beta1.BindingObj) plan {
	ru := p.GetPlacementSpec().Strategy.RollingUpdate
	maxUnavailableVal, maxSurgeVal, period := defaultMaxUnavailable, defaultMaxSurge, defaultUnavailablePeriod
	if ru != nil {
		if ru.MaxUnavailable != nil {
			maxUnavailableVal = *ru.MaxUnavailable
		}
		if ru.MaxSurge != nil {
			maxSurgeVal = *ru.MaxSurge
		}
		if ru.UnavailablePeriodSeconds != nil {
			period = time.Duration(*ru.UnavailablePeriodSeconds) * time.Second
		}
	}
	sort.Slice(bindings, func(i, j int) bool { return bindings[i].GetName() < bindings[j].GetName() })

	var scheduled, bound, unscheduled []placementv1beta1.BindingObj
	for _, b := range bindings {
		if !b.GetDeletionTimestamp().IsZero() {
			continue
		}
		switch b.GetBindingSpec().State {
		case placementv1beta1.BindingStateScheduled:
			scheduled = append(scheduled, b)
		case placementv1beta1.BindingStateBound:
			bound = append(bound, b)
		case placementv1beta1.BindingStateUnscheduled:
			unscheduled = append(unscheduled, b)
		}
	}
	target := targetClusters(p, len(scheduled)+len(bound))
	maxUnavailable := scaled(maxUnavailableVal, target)
	if maxUnavailable < 1 && target > 0 {
		// A rollout that may never take a cluster down could never update one.
		maxUnavailable = 1
	}
	maxSurge := scaled(maxSurgeVal, target)

	var out plan
	ready := func(b placementv1beta1.BindingObj) bool {
		ok, wait := available(now, b, period)
		if wait > 0 && (out.recheck == 0 || wait < out.recheck) {
			out.recheck = wait
		}
		return ok
	}
	availableCount := 0
	for _, b := range append(append([]placementv1beta1.BindingObj{}, bound...), unscheduled...) {
		if ready(b) {
			availableCount++
		}
	}
	room := availableCount - (target - maxUnavailable)

	for _, b := range unscheduled {
		switch {
		case !ready(b):
			out.remove = append(out.remove, b)
		case room > 0:
			out.remove = append(out.remove, b)
			room--
		}
	}
	boundCount := len(bound) + len(unscheduled) - len(out.remove)
	for _, b := range scheduled {
		if boundCount < target+maxSurge {
			out.update = append(out.update, b)
			boundCount++
		} else {
			out.blocked = append(out.blocked, b)
		}
	}
	for _, b := range bound {
		if spec := b.GetBindingSpec(); spec.ResourceSnapshotName == latest && sameStrategy(p, b) &&
			want[spec.TargetCluster].Equal(spec.ClusterResourceOverrideSnapshots, spec.ResourceOverrideSnapshots) {
			out.current = append(out.current, b)
			continue
		}
		switch {
		case !ready(b):
			out.update = append(out.update, b)
		case room > 0:
			out.update = append(out.update, b)
			room--
		default:
			out.blocked = append(out.blocked, b)
		}
	}
	return out
}

// targetClusters is the N the rollout limits are counted against, as
// KubeFleet defines it: numberOfClusters for PickN, the named clusters for
// PickFixed, and the picked clusters for PickAll.
func targetClusters(p placementv1beta1.PlacementObj, picked int) int {
	policy := p.GetPlacementSpec().Policy
	switch {
	case policy == nil:
		return picked
	case policy.PlacementType == placementv1beta1.PickNPlacementType && policy.NumberOfClusters != nil:
		return int(*policy.NumberOfClusters)
	case policy.PlacementType == placementv1beta1.PickFixedPlacementType:
		return len(policy.ClusterNames)
	}
	return picked
}

func sameStrategy(p placementv1beta1.PlacementObj, b placementv1beta1.BindingObj) bool {
	return equality.Semantic.DeepEqual(p.GetPlacementSpec().Strategy.ApplyStrategy, b.GetBindingSpec().ApplyStrategy)
}

// scaled resolves an int-or-percent against the target, rounding up.
func scaled(v intstr.IntOrString, target int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, target, true)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// available tells whether what a binding currently serves (an outdated
// binding still serves the previous version) is available: tracked
// availability, or untracked resources applied at least period ago (the wait
// left is returned).
func available(now time.Time, b placementv1beta1.BindingObj, period time.Duration) (bool, time.Duration) {
	spec := b.GetBindingSpec()
	if spec.State != placementv1beta1.BindingStateBound && spec.State != placementv1beta1.BindingStateUnscheduled {
		return false, 0
	}
	c := meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingAvailable))
	// Unscheduling changes a binding's state only, not what it serves: a
	// report from before still holds (a binding seen as unavailable would
	// be removed at once, past maxUnavailable).
	current := c != nil && (c.ObservedGeneration == b.GetGeneration() || spec.State == placementv1beta1.BindingStateUnscheduled)
	if !current || c.Status != metav1.ConditionTrue {
		return false, 0
	}
	if c.Reason != placementv1beta1.WorkNotAvailabilityTrackableReason {
		return true, 0
	}
	applied := meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingApplied))
	if applied == nil {
		return false, 0
	}
	if wait := applied.LastTransitionTime.Add(period).Sub(now); wait > 0 {
		return false, wait
	}
	return true, 0
}
