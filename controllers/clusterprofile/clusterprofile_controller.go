// Package clusterprofile serves the SIG-Multicluster cluster inventory API
// from the hub: it keeps, in each workspace that binds the placement API, a
// ClusterProfile (multicluster.x-k8s.io/v1alpha1) for each member cluster
// the workspace may use: every member in root:fleet, the granted ones in a
// team workspace. Tools that find clusters through the inventory (Argo CD,
// Kueue, multicluster-runtime providers) then work from a team's own
// workspace, and see only its clusters.
package clusterprofile

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controller in logs.
const ControllerName = "fleet-clusterprofile"

// coalesce is how long a change of the members or grants waits before the
// workspaces' profiles follow it: members joining together make one pass.
const coalesce = 2 * time.Second

// Reconciler keeps the ClusterProfiles of each engaged workspace; its
// requests are named after the workspace's logical cluster.
type Reconciler struct {
	// Fleet reads MemberClusters and ClusterGrants in root:fleet (cached).
	Fleet      client.Reader
	Workspaces *clients.Factory

	mu         sync.Mutex
	workspaces map[logicalcluster.Name]bool
	engaged    chan event.GenericEvent
}

// SetupWithManager registers the controller on root:fleet's manager:
// workspaces as they are engaged (Engaged), and every workspace when a
// member or a grant changes what profiles show.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.workspaces = map[logicalcluster.Name]bool{}
	r.engaged = make(chan event.GenericEvent, 1024)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WatchesRawSource(source.Channel(r.engaged, &handler.EnqueueRequestForObject{})).
		Watches(&clusterv1beta1.MemberCluster{}, r.everyWorkspace(), builder.WithPredicates(profileChanged{})).
		Watches(&tenancyv1alpha1.ClusterGrant{}, r.everyWorkspace(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(metrics.Reconciler[reconcile.Request](ControllerName, r))
}

// Engaged tells the controller of a workspace that binds the placement API.
func (r *Reconciler) Engaged(name logicalcluster.Name) {
	r.mu.Lock()
	r.workspaces[name] = true
	r.mu.Unlock()
	obj := &clusterv1beta1.MemberCluster{}
	obj.Name = name.String()
	select {
	case r.engaged <- event.GenericEvent{Object: obj}:
	default:
		// Never hold up the engagement (at a hub start every workspace is
		// engaged at once, before the controller runs).
		go func() { r.engaged <- event.GenericEvent{Object: obj} }()
	}
}

// Forget drops a workspace that went away.
func (r *Reconciler) Forget(name logicalcluster.Name) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.workspaces, name)
}

func (r *Reconciler) engagedNow(name logicalcluster.Name) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workspaces[name]
}

func (r *Reconciler) all() []logicalcluster.Name {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Keys(r.workspaces))
}

// everyWorkspace enqueues every engaged workspace, after coalesce.
func (r *Reconciler) everyWorkspace() handler.EventHandler {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, name := range r.all() {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Name: name.String()}}, coalesce)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q)
		},
		UpdateFunc: func(_ context.Context, _ event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q)
		},
		DeleteFunc: func(_ context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q)
		},
	}
}

// profileChanged passes member clusters appearing, going, and changing
// what their profiles show (labels, health, joining, property values): not
// their heartbeats.
type profileChanged struct{ predicate.Funcs }

func (profileChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*clusterv1beta1.MemberCluster), e.ObjectNew.(*clusterv1beta1.MemberCluster)
	if !equality.Semantic.DeepEqual(o.Labels, n.Labels) || len(o.Status.Properties) != len(n.Status.Properties) {
		return true
	}
	for name, v := range n.Status.Properties {
		if o.Status.Properties[name].Value != v.Value {
			return true
		}
	}
	for _, t := range []string{clusterv1beta1.ConditionTypeMemberClusterHealthy, clusterv1beta1.ConditionTypeMemberClusterJoined} {
		oc, nc := meta.FindStatusCondition(o.Status.Conditions, t), meta.FindStatusCondition(n.Status.Conditions, t)
		if (oc == nil) != (nc == nil) || (nc != nil && (oc.Status != nc.Status || oc.Reason != nc.Reason)) {
			return true
		}
	}
	return false
}
