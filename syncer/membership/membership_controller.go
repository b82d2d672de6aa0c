// Package membership keeps the hub informed about the syncer's member
// cluster: it joins or leaves as the InternalMemberCluster asks, and writes a
// heartbeat with the cluster's properties every heartbeatPeriodSeconds.
package membership

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/syncer/properties"
)

// ControllerName names this controller in logs.
const ControllerName = "fleet-membership"

const (
	defaultHeartbeatPeriod = 60 * time.Second
	collectTimeout         = 15 * time.Second
)

// Reconciler reconciles the member's InternalMemberCluster on the hub.
type Reconciler struct {
	Hub client.Client
	// Homes, if set, are the clients of the shards' homes of Work the
	// syncer applies from besides Hub (see syncer/homes).
	Homes      func() []client.Client
	MemberName string
	Namespace  string
	Properties properties.Provider
	// Changes, if set, triggers a report outside the heartbeat (e.g. when a
	// namespace appears, which ResourcePlacements wait for).
	Changes <-chan struct{}
	// ProviderStartErr is the error the property provider failed to start
	// with, if any; it is reported, and heartbeats go on without properties.
	ProviderStartErr error
	Clock            clock.PassiveClock
}

// SetupWithManager registers the controller. Only spec changes (join/leave,
// heartbeat period) trigger it; the heartbeat itself is the requeue.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1beta1.InternalMemberCluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.Changes != nil {
		b = b.WatchesRawSource(source.Channel(r.events(), &handler.EnqueueRequestForObject{}))
	}
	return b.
		// A failed heartbeat (hub unreachable) is retried soon, not with the
		// default backoff that grows to many minutes.
		WithOptions(controller.Options{RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 10*time.Second)}).
		Complete(metrics.Reconciler[reconcile.Request](ControllerName, r))
}

// events turns change signals into events for the member's own
// InternalMemberCluster.
func (r *Reconciler) events() <-chan event.GenericEvent {
	out := make(chan event.GenericEvent)
	go func() {
		defer close(out)
		for range r.Changes {
			imc := &clusterv1beta1.InternalMemberCluster{}
			imc.Name, imc.Namespace = r.MemberName, r.Namespace
			out <- event.GenericEvent{Object: imc}
		}
	}()
	return out
}

// Reconcile acts on the desired state and sends a heartbeat.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != r.MemberName || req.Namespace != r.Namespace {
		return ctrl.Result{}, nil
	}
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := r.Hub.Get(ctx, req.NamespacedName, imc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	joining := imc.Spec.State == clusterv1beta1.ClusterStateJoin
	if !joining {
		if err := r.releaseWorks(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.report(ctx, imc, joining)
	if err := r.Hub.Status().Update(ctx, imc); err != nil {
		return ctrl.Result{}, fmt.Errorf("sending heartbeat: %w", err)
	}
	period := defaultHeartbeatPeriod
	if imc.Spec.HeartbeatPeriodSeconds > 0 {
		period = time.Duration(imc.Spec.HeartbeatPeriodSeconds) * time.Second
	}
	return ctrl.Result{RequeueAfter: period}, nil
}

// releaseWorks drops the syncer's finalizer from its Works, in every home,
// when leaving: the hub may then delete them, and nothing applied on the
// member is removed.
func (r *Reconciler) releaseWorks(ctx context.Context) error {
	homes := []client.Client{r.Hub}
	if r.Homes != nil {
		homes = append(homes, r.Homes()...)
	}
	for _, home := range homes {
		works := &placementv1beta1.WorkList{}
		if err := home.List(ctx, works, client.InNamespace(r.Namespace)); err != nil {
			return err
		}
		for i := range works.Items {
			w := &works.Items[i]
			if controllerutil.RemoveFinalizer(w, placementv1beta1.WorkFinalizer) {
				if err := home.Update(ctx, w); client.IgnoreNotFound(err) != nil {
					return fmt.Errorf("releasing Work %s: %w", w.Name, err)
				}
			}
		}
	}
	return nil
}

// report fills the status: agent state, heartbeat and, while joined, the
// cluster's properties.
func (r *Reconciler) report(ctx context.Context, imc *clusterv1beta1.InternalMemberCluster, joined bool) {
	now := metav1.NewTime(r.Clock.Now())
	st := &imc.Status
	agent := st.MemberAgentStatus()
	agent.LastReceivedHeartbeat = now
	agent.SetJoined(joined, imc.Generation)
	health := r.collect(ctx, imc, joined)
	health.ObservedGeneration = imc.Generation
	meta.SetStatusCondition(&agent.Conditions, health)
}

// collect runs the property provider and returns the agent's health: the
// member's API server answers if collection works.
func (r *Reconciler) collect(ctx context.Context, imc *clusterv1beta1.InternalMemberCluster, joined bool) metav1.Condition {
	st := &imc.Status
	healthy := metav1.Condition{Type: clusterv1beta1.AgentHealthy, Status: metav1.ConditionTrue,
		Reason: clusterv1beta1.ReasonInternalMemberClusterHealthy, Message: "the member cluster's API server answers"}
	if r.ProviderStartErr != nil {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: clusterv1beta1.ConditionTypeClusterPropertyProviderStarted,
			Status: metav1.ConditionFalse, Reason: clusterv1beta1.ReasonPropertyProviderFailedToStart, Message: r.ProviderStartErr.Error(), ObservedGeneration: imc.Generation})
		return healthy
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: clusterv1beta1.ConditionTypeClusterPropertyProviderStarted,
		Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonPropertyProviderStarted, Message: "the property provider is running", ObservedGeneration: imc.Generation})
	if !joined {
		return healthy
	}
	ctx, cancel := context.WithTimeout(ctx, collectTimeout)
	defer cancel()
	c, err := r.Properties.Collect(ctx)
	if err != nil {
		reason := clusterv1beta1.ReasonMemberClusterAPIServerUnhealthy
		if ctx.Err() != nil {
			reason = clusterv1beta1.ReasonPropertyCollectionTimedOut
		}
		msg := fmt.Sprintf("collecting cluster properties failed: %v", err)
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: clusterv1beta1.ConditionTypeClusterPropertyCollectionSucceeded,
			Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: imc.Generation})
		healthy.Status, healthy.Reason, healthy.Message = metav1.ConditionFalse, clusterv1beta1.ReasonInternalMemberClusterUnhealthy, msg
		return healthy
	}
	st.Properties = c.Properties
	st.ResourceUsage = c.Resources
	st.Namespaces = c.Namespaces
	for _, cond := range c.Conditions {
		cond.ObservedGeneration = imc.Generation
		meta.SetStatusCondition(&st.Conditions, cond)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: clusterv1beta1.ConditionTypeClusterPropertyCollectionSucceeded,
		Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonPropertiesCollected, Message: "cluster properties are up to date", ObservedGeneration: imc.Generation})
	return healthy
}
