// Package override snapshots ClusterResourceOverrides and ResourceOverrides
// in every workspace: each change of an override's spec becomes an immutable
// snapshot {override}-{index}, the newest labelled latest, which the rollout
// records on the bindings it concerns. An override that breaks a rule the
// schema cannot express (a resource selected by two overrides, more than 100
// overrides, a remove with a value) gets no new snapshot and a Warning event
// saying what to fix; its last valid snapshot, if any, stays in force.
package override

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/predicates"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controllers in logs and events.
const ControllerName = "fleet-override"

// maxOverrides is how many overrides of each kind a workspace may hold, as
// KubeFleet's admission allows.
const maxOverrides = 100

// historyLimit is how many snapshots of an override are kept: bindings
// that a rollout has not reached yet still name older ones.
const historyLimit = 5

// InvalidOverrideReason is the reason of the event on an invalid override.
const InvalidOverrideReason = "InvalidOverride"

// Reconciler snapshots one kind of override.
type Reconciler struct {
	Manager    mcmanager.Manager
	Workspaces *clients.Factory
	// Namespaced selects ResourceOverrides, else ClusterResourceOverrides.
	Namespaced bool
}

func (r *Reconciler) kind() kind {
	if r.Namespaced {
		return namespacedKind{}
	}
	return clusterKind{}
}

func (r *Reconciler) controllerName() string {
	if r.Namespaced {
		return ControllerName + "-ro"
	}
	return ControllerName + "-cro"
}

// SetupWithManager registers the controller. Whether an override is valid
// depends on its siblings, so a change of one brings the others back.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	k := r.kind()
	changed := mcbuilder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicates.DeletionStarted{}))
	return mcbuilder.ControllerManagedBy(mgr).
		Named(r.controllerName()).
		For(k.newOverride(), changed).
		Watches(k.newOverride(), r.siblingsOf(), changed).
		Complete(metrics.Reconciler[mcreconcile.Request](r.controllerName(), r))
}

func (r *Reconciler) siblingsOf() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(clusterName string, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []mcreconcile.Request {
			siblings, err := r.kind().siblings(ctx, cl.GetCache(), o)
			if err != nil {
				log.FromContext(ctx).Error(err, "listing the overrides beside a changed one; their validity is not checked again for it", "workspace", clusterName, "override", client.ObjectKeyFromObject(o))
				return nil
			}
			var out []mcreconcile.Request
			for _, s := range siblings {
				if s.GetName() != o.GetName() {
					out = append(out, mcreconcile.Request{ClusterName: clusterName, Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)}})
				}
			}
			return out
		})
	}
}

// Reconcile snapshots one override, or removes its snapshots once it is deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := placements.WorkspaceClient(ctx, r.Manager, r.Workspaces, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, placements.IgnoreWorkspaceGone(err)
	}
	k := r.kind()
	o := k.newOverride()
	if err := c.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !o.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.delete(ctx, c, o)
	}
	if controllerutil.AddFinalizer(o, placementv1beta1.OverrideFinalizer) {
		if err := c.Update(ctx, o); err != nil {
			return placements.RetryConflict(err)
		}
	}
	if err := r.validate(ctx, c, o); err != nil {
		ws, wsErr := r.Workspaces.For(logicalcluster.Name(req.ClusterName))
		if wsErr != nil {
			return ctrl.Result{}, wsErr
		}
		ws.Recorder(c.Scheme(), ControllerName).Event(o, corev1.EventTypeWarning, InvalidOverrideReason, err.Error())
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.snapshot(ctx, c, o)
}

// validate checks the rules the schema cannot: every operation's value, at
// most maxOverrides per workspace, and each resource selected by one
// override only. Among overrides that break the last two, the older ones
// win, as if the newer had been refused at creation.
func (r *Reconciler) validate(ctx context.Context, c client.Reader, o client.Object) error {
	k := r.kind()
	if p := k.policy(o); p != nil {
		for i, rule := range p.OverrideRules {
			for j, op := range rule.JSONPatchOverrides {
				if err := overrides.ValidateOperation(op); err != nil {
					return fmt.Errorf("%s %s: overrideRules[%d].jsonPatchOverrides[%d]: %w", k.name(), o.GetName(), i, j, err)
				}
			}
		}
	}
	siblings, err := k.siblings(ctx, c, o)
	if err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, s := range k.selected(o) {
		mine[s] = true
	}
	older := 0
	for _, s := range siblings {
		if !s.GetDeletionTimestamp().IsZero() || !before(s, o) {
			continue
		}
		older++
		for _, sel := range k.selected(s) {
			if mine[sel] {
				return fmt.Errorf("%s %s selects %s, which %s %s already selects; a resource can be selected by one %s only: remove the selector from one of them",
					k.name(), o.GetName(), sel, k.name(), s.GetName(), k.name())
			}
		}
	}
	if older >= maxOverrides {
		return fmt.Errorf("%s %s is one more than the %d allowed in this workspace (or namespace, for ResourceOverrides): delete overrides you no longer need", k.name(), o.GetName(), maxOverrides)
	}
	return nil
}

// before orders overrides by creation, then name.
func before(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetName() < b.GetName()
}

// snapshot writes a new latest snapshot when the spec changed since the
// latest one, and prunes the oldest.
func (r *Reconciler) snapshot(ctx context.Context, c client.Client, o client.Object) error {
	k := r.kind()
	raw, err := json.Marshal(k.spec(o))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(raw)
	snaps, err := k.snapshots(ctx, c, o)
	if err != nil {
		return err
	}
	sort.Slice(snaps, func(i, j int) bool { return index(snaps[i]) > index(snaps[j]) })
	if len(snaps) == 0 || !bytes.Equal(k.snapshotHash(snaps[0]), sum[:]) {
		next := 0
		if len(snaps) > 0 {
			next = index(snaps[0]) + 1
		}
		s := k.newSnapshot(o, metav1.ObjectMeta{
			Name: placementv1beta1.OverrideSnapshotName(o.GetName(), next), Namespace: o.GetNamespace(),
			Labels: map[string]string{
				placementv1beta1.OverrideTrackingLabel: o.GetName(),
				placementv1beta1.OverrideIndexLabel:    strconv.Itoa(next),
				placementv1beta1.IsLatestSnapshotLabel: "true",
			},
		}, sum[:])
		if err := c.Create(ctx, s); err != nil {
			return fmt.Errorf("snapshotting %s %s: %w", k.name(), o.GetName(), err)
		}
		snaps = append([]client.Object{s}, snaps...)
	}
	for i, s := range snaps {
		switch {
		case i >= historyLimit:
			if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
				return err
			}
		case i > 0 && s.GetLabels()[placementv1beta1.IsLatestSnapshotLabel] != "false":
			s.GetLabels()[placementv1beta1.IsLatestSnapshotLabel] = "false"
			if err := c.Update(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func index(s client.Object) int {
	i, _ := placements.Index(s, placementv1beta1.OverrideIndexLabel)
	return i
}

// delete removes the override's snapshots, then its finalizer: the rollout
// then takes the override off the bindings that named it.
func (r *Reconciler) delete(ctx context.Context, c client.Client, o client.Object) error {
	if !controllerutil.ContainsFinalizer(o, placementv1beta1.OverrideFinalizer) {
		return nil
	}
	snaps, err := r.kind().snapshots(ctx, c, o)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(o, placementv1beta1.OverrideFinalizer)
	return c.Update(ctx, o)
}
