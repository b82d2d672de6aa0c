// Package eviction executes ClusterResourcePlacementEvictions in every
// workspace: an eviction removes one placement's resources from one cluster
// by deleting the placement's binding to it, unless the placement's
// ClusterResourcePlacementDisruptionBudget forbids it. Each eviction is
// decided once: its Valid and Executed conditions are terminal, and a
// blocked eviction is re-created to be tried again.
package eviction

import (
	"context"
	"fmt"

	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controller in logs.
const ControllerName = "fleet-eviction"

// KubeFleet's eviction messages, which tools match on.
const (
	invalidMissingPlacement  = "Failed to find ClusterResourcePlacement targeted by eviction"
	invalidDeletingPlacement = "Found deleting ClusterResourcePlacement targeted by eviction"
	invalidPickFixed         = "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction"
	invalidMissingBinding    = "Failed to find scheduler decision for placement in cluster targeted by eviction"
	invalidMultipleBindings  = "Found more than one scheduler decision for placement in cluster targeted by eviction"
	valid                    = "Eviction is valid"
	allowedBeingRemoved      = "Eviction is allowed, resources propagated by placement is currently being removed from cluster targeted by eviction"
	allowedPlacementFailed   = "Eviction is allowed, placement has failed"
	blockedMisconfiguredPDB  = "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable is specified as a percentage for PickAll ClusterResourcePlacement"
	blockedNotPropagated     = "Eviction is blocked, placement has not propagated resources to target cluster yet"
	allowedByPDBFmt          = "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: %d, totalPlacements: %d"
)

// Reconciler decides and executes evictions.
type Reconciler struct {
	Manager    mcmanager.Manager
	Workspaces *clients.Factory
}

// SetupWithManager registers the controller; an eviction is decided once,
// so nothing but its creation concerns it.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	return mcbuilder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&placementv1beta1.ClusterResourcePlacementEviction{}).
		Complete(metrics.Reconciler[mcreconcile.Request](ControllerName, r))
}

// Reconcile decides one eviction, executes it if allowed, and records both.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := placements.WorkspaceClient(ctx, r.Manager, r.Workspaces, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, placements.IgnoreWorkspaceGone(err)
	}
	e := &placementv1beta1.ClusterResourcePlacementEviction{}
	if err := c.Get(ctx, req.NamespacedName, e); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if decided(e) || !e.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// The verdict counts available clusters: read live, an eviction decided
	// right after another must see that one's binding going.
	ws, err := r.Workspaces.For(logicalcluster.Name(req.ClusterName))
	if err != nil {
		return ctrl.Result{}, err
	}
	d, err := decide(ctx, ws.Client, e)
	if err != nil {
		return ctrl.Result{}, err
	}
	if d.evict != nil && d.evict.GetDeletionTimestamp().IsZero() {
		if err := client.IgnoreNotFound(c.Delete(ctx, d.evict, client.Preconditions{UID: ptr.To(d.evict.GetUID())})); err != nil {
			return ctrl.Result{}, fmt.Errorf("evicting %s from %s: %w", e.Spec.PlacementName, e.Spec.ClusterName, err)
		}
	}
	d.record(e)
	return ctrl.Result{}, c.Status().Update(ctx, e)
}

// decided tells whether the eviction reached its terminal state.
func decided(e *placementv1beta1.ClusterResourcePlacementEviction) bool {
	v := meta.FindStatusCondition(e.Status.Conditions, placementv1beta1.PlacementEvictionConditionTypeValid)
	return v != nil && (v.Status == metav1.ConditionFalse || meta.FindStatusCondition(e.Status.Conditions, placementv1beta1.PlacementEvictionConditionTypeExecuted) != nil)
}

// decision is the outcome of an eviction: invalid (with why), or valid and
// executed or not (with why), and the binding to delete.
type decision struct {
	invalid  string
	executed bool
	message  string
	evict    placementv1beta1.BindingObj
}

func (d decision) record(e *placementv1beta1.ClusterResourcePlacementEviction) {
	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionTrue
		if !ok {
			status = metav1.ConditionFalse
		}
		meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: e.Generation})
	}
	if d.invalid != "" {
		set(placementv1beta1.PlacementEvictionConditionTypeValid, false, placementv1beta1.ClusterResourcePlacementEvictionInvalidReason, d.invalid)
		return
	}
	set(placementv1beta1.PlacementEvictionConditionTypeValid, true, placementv1beta1.ClusterResourcePlacementEvictionValidReason, valid)
	reason := placementv1beta1.ClusterResourcePlacementEvictionExecutedReason
	if !d.executed {
		reason = placementv1beta1.ClusterResourcePlacementEvictionNotExecutedReason
	}
	set(placementv1beta1.PlacementEvictionConditionTypeExecuted, d.executed, reason, d.message)
}

// decide checks an eviction against its placement, the placement's binding
// to the cluster and its disruption budget.
func decide(ctx context.Context, c client.Reader, e *placementv1beta1.ClusterResourcePlacementEviction) (decision, error) {
	k := placements.Key{Name: e.Spec.PlacementName}
	p, err := placements.Get(ctx, c, k)
	switch {
	case apierrors.IsNotFound(err):
		return decision{invalid: invalidMissingPlacement}, nil
	case err != nil:
		return decision{}, err
	case !p.GetDeletionTimestamp().IsZero():
		return decision{invalid: invalidDeletingPlacement}, nil
	case placementType(p) == placementv1beta1.PickFixedPlacementType:
		return decision{invalid: invalidPickFixed}, nil
	}
	bindings, err := placements.BindingsFromServer(ctx, c, k)
	if err != nil {
		return decision{}, err
	}
	var target []placementv1beta1.BindingObj
	for _, b := range bindings {
		if b.GetBindingSpec().TargetCluster == e.Spec.ClusterName {
			target = append(target, b)
		}
	}
	switch {
	case len(target) == 0:
		return decision{invalid: invalidMissingBinding}, nil
	case len(target) > 1:
		return decision{invalid: invalidMultipleBindings}, nil
	}
	b := target[0]
	switch {
	case !b.GetDeletionTimestamp().IsZero():
		return decision{executed: true, message: allowedBeingRemoved}, nil
	case failed(b):
		return decision{executed: true, message: allowedPlacementFailed, evict: b}, nil
	case !propagated(b):
		return decision{message: blockedNotPropagated}, nil
	}
	budget := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{}
	if err := c.Get(ctx, client.ObjectKey{Name: p.GetName()}, budget); apierrors.IsNotFound(err) {
		return decision{executed: true, message: placementv1beta1.EvictionAllowedNoPDBMessage, evict: b}, nil
	} else if err != nil {
		return decision{}, err
	}
	allowed, msg := allowedBy(budget.Spec, p, bindings)
	d := decision{executed: allowed, message: msg}
	if allowed {
		d.evict = b
	}
	return d, nil
}

func placementType(p placementv1beta1.PlacementObj) placementv1beta1.PlacementType {
	if policy := p.GetPlacementSpec().Policy; policy != nil && policy.PlacementType != "" {
		return policy.PlacementType
	}
	return placementv1beta1.PickAllPlacementType
}

// failed tells whether the binding reports its resources failed to apply
// or to become available: evicting it takes nothing working away.
func failed(b placementv1beta1.BindingObj) bool {
	for _, t := range []placementv1beta1.ResourceBindingConditionType{placementv1beta1.ResourceBindingApplied, placementv1beta1.ResourceBindingAvailable} {
		c := meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(t))
		if c != nil && c.ObservedGeneration == b.GetGeneration() && c.Status == metav1.ConditionFalse {
			return true
		}
	}
	return false
}

// propagated tells whether the binding has put resources on its cluster.
func propagated(b placementv1beta1.BindingObj) bool {
	return b.GetBindingSpec().State != placementv1beta1.BindingStateScheduled &&
		meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingApplied)) != nil
}
