// Package membercluster runs member clusters' lifecycle on the hub, in the
// platform workspace root:fleet: join (reserved namespace, the syncer's RBAC,
// the InternalMemberCluster), status (mirrored from what the syncer reports,
// plus heartbeat health) and leave (wait for the syncer, then clean up).
package membercluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	"github.com/fleetplane/fleetplane/metrics"
)

// ControllerName is the name of this controller in logs, events and metrics.
const ControllerName = "fleet-membercluster"

// Defaults as in KubeFleet's hub-agent chart: with the default heartbeat
// period of 60s, a member is flagged after three missed heartbeats.
const (
	DefaultUnhealthyThreshold = 3 * time.Minute
	DefaultForceDeleteWait    = 15 * time.Minute
)

// Reconciler reconciles MemberClusters in root:fleet.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
	// UnhealthyThreshold is how long a member may go without a heartbeat
	// before it is reported unhealthy (and no longer picked for new
	// placements); never less than three of the member's heartbeat periods.
	UnhealthyThreshold time.Duration
	// ForceDeleteWait is how long leaving waits for the syncer to confirm
	// before the member's hub state is removed anyway.
	ForceDeleteWait time.Duration
}

// workers is how many member clusters are reconciled at once. Every
// heartbeat reconciles its member (17 a second at 1,000 members), and a
// reconcile mostly waits for its status write: with one worker, under
// load, the queue held all 1,000 members.
const workers = 4

// SetupWithManager registers the controller: it reacts to MemberClusters,
// the namespaces it owns, and InternalMemberCluster status changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1beta1.MemberCluster{}).
		Owns(&corev1.Namespace{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&clusterv1beta1.InternalMemberCluster{}, handler.EnqueueRequestsFromMapFunc(imcToMemberCluster)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(metrics.Reconciler[reconcile.Request](ControllerName, r))
}

// imcToMemberCluster maps an InternalMemberCluster to its MemberCluster (same name).
func imcToMemberCluster(_ context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != namespaceFor(o.GetName()) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
}

// Reconcile drives one MemberCluster towards its desired state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &clusterv1beta1.MemberCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return r.leave(ctx, mc)
	}
	if err := r.ensureFinalizerAndLabel(ctx, mc); err != nil {
		return ctrl.Result{}, err
	}
	imc, err := r.join(ctx, mc)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.syncStatus(ctx, mc, imc)
}

// ensureFinalizerAndLabel adds the cleanup finalizer and the member-name label
// (which lets overrides and affinities target one cluster by name).
func (r *Reconciler) ensureFinalizerAndLabel(ctx context.Context, mc *clusterv1beta1.MemberCluster) error {
	patch := client.MergeFrom(mc.DeepCopy())
	if !clusterv1beta1.SetFinalizerAndNameLabel(mc) {
		return nil
	}
	return r.Client.Patch(ctx, mc, patch)
}

func ignoreAlreadyExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
