package membercluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// leave runs when a MemberCluster is deleted: tell the syncer to leave, wait
// until it confirms (it stops applying and keeps what it placed) or until
// ForceDeleteWait passes, then remove the member's namespace with its Work,
// RBAC and InternalMemberCluster, and finally the finalizer.
func (r *Reconciler) leave(ctx context.Context, mc *clusterv1beta1.MemberCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mc, clusterv1beta1.MemberClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	ns := namespaceFor(mc.Name)
	imc := &clusterv1beta1.InternalMemberCluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mc.Name}, imc)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	imcExists := err == nil
	if imcExists && imc.Spec.State != clusterv1beta1.ClusterStateLeave {
		if _, err := r.ensureIMC(ctx, mc, ns, clusterv1beta1.ClusterStateLeave); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Event(mc, corev1.EventTypeNormal, clusterv1beta1.EventReasonLeaving, "Asked the member's syncer to leave the fleet")
	}

	forceAt := mc.DeletionTimestamp.Add(r.ForceDeleteWait)
	if imcExists && !syncerLeft(imc) {
		if wait := forceAt.Sub(r.Clock.Now()); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		r.Recorder.Eventf(mc, corev1.EventTypeWarning, clusterv1beta1.EventReasonForceLeave, "The member's syncer did not confirm leaving within %s; removing its hub state anyway", r.ForceDeleteWait)
	}

	gone, err := removeNamespace(ctx, r.Client, ns)
	if err != nil || !gone {
		return ctrl.Result{RequeueAfter: time.Second}, err
	}
	controllerutil.RemoveFinalizer(mc, clusterv1beta1.MemberClusterFinalizer)
	if err := r.Client.Update(ctx, mc); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing finalizer of member cluster %s: %w", mc.Name, err)
	}
	return ctrl.Result{}, nil
}

// syncerLeft is true once the syncer reports that it is no longer joined.
func syncerLeft(imc *clusterv1beta1.InternalMemberCluster) bool {
	for _, a := range imc.Status.AgentStatus {
		if a.Type != clusterv1beta1.MemberAgent {
			continue
		}
		joined := meta.FindStatusCondition(a.Conditions, clusterv1beta1.AgentJoined)
		return joined != nil && joined.Status == metav1.ConditionFalse
	}
	// A syncer that never reported has nothing to clean up.
	return true
}

// removeNamespace deletes the member's namespace. Works may still carry the
// syncer's finalizer when it left without confirming; those are released so
// that the namespace can go (the member keeps whatever was applied).
func removeNamespace(ctx context.Context, c client.Client, ns string) (bool, error) {
	works := &placementv1beta1.WorkList{}
	if err := c.List(ctx, works, client.InNamespace(ns)); err != nil {
		return false, err
	}
	for i := range works.Items {
		w := &works.Items[i]
		if controllerutil.RemoveFinalizer(w, placementv1beta1.WorkFinalizer) {
			if err := c.Update(ctx, w); client.IgnoreNotFound(err) != nil {
				return false, err
			}
		}
	}
	namespace := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: ns}, namespace)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if namespace.DeletionTimestamp.IsZero() {
		if err := c.Delete(ctx, namespace); client.IgnoreNotFound(err) != nil {
			return false, err
		}
	}
	return false, nil
}
