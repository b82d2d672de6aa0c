// Package clusterprofile serves the SIG-Multicluster cluster inventory API
// from the hub: it keeps, in each workspace that binds the cluster
// inventory export, a ClusterProfile (multicluster.x-k8s.io/v1alpha1) for
// each member cluster the workspace may use: every member in root:fleet,
// the granted ones in a team workspace. Tools that find clusters through
// the inventory (Argo CD, Kueue, multicluster-runtime providers) then work
// from a team's own workspace, and see only its clusters.
//
// A workspace asks for profiles by binding the export: profiles cost one
// object per (workspace, cluster), which a thousand teams on a thousand
// clusters that never read them would pay as a million writes.
package clusterprofile

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2/permissionclaims"
	kcpclusterclient "github.com/kcp-dev/kcp/sdk/client/clientset/versioned/cluster"
	kcpinformers "github.com/kcp-dev/kcp/sdk/client/informers/externalversions"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/bootstrap"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controller in logs.
const ControllerName = "fleet-clusterprofile"

// coalesce is how long a change of the members or grants waits before the
// workspaces' profiles follow it: members joining together make one pass.
const coalesce = 2 * time.Second

// Reconciler keeps the ClusterProfiles of each workspace of this shard
// that binds the cluster inventory export; its requests are named after
// the workspace's logical cluster.
type Reconciler struct {
	// Fleet reads MemberClusters and ClusterGrants in root:fleet (cached).
	Fleet      client.Reader
	Workspaces *clients.Factory
	// Shard reaches every workspace of this shard (/clusters/*), where the
	// bindings of the export are watched.
	Shard *rest.Config

	mu         sync.Mutex
	workspaces map[logicalcluster.Name]bool
	bound      chan event.GenericEvent
}

// SetupWithManager registers the controller on root:fleet's manager:
// workspaces as they bind the export, and every one of them when a member
// or a grant changes what profiles show.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.workspaces = map[logicalcluster.Name]bool{}
	r.bound = make(chan event.GenericEvent, 1024)
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		return r.watchBindings(ctx, mgr.GetAPIReader())
	})); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WatchesRawSource(source.Channel(r.bound, &handler.EnqueueRequestForObject{})).
		Watches(&clusterv1beta1.MemberCluster{}, r.everyWorkspace(), builder.WithPredicates(profileChanged{})).
		Watches(&tenancyv1alpha1.ClusterGrant{}, r.everyWorkspace(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(metrics.Reconciler[reconcile.Request](ControllerName, r))
}

// watchBindings follows, until ctx ends, the APIBindings of this shard's
// workspaces to root:fleet's cluster inventory export, which kcp labels
// with the export's cluster and name: a workspace is served from the
// moment its binding is Bound until the binding goes.
func (r *Reconciler) watchBindings(ctx context.Context, fleet client.Reader) error {
	export, err := bootstrap.ExportIdentity(ctx, fleet, fleetconfig.ClusterInventoryExport)
	if err != nil {
		return err
	}
	kcp, err := kcpclusterclient.NewForConfig(r.Shard)
	if err != nil {
		return err
	}
	selector := labels.SelectorFromSet(labels.Set{apisv1alpha1.InternalAPIBindingExportLabelKey: permissionclaims.ToAPIBindingExportLabelValue(logicalcluster.From(export), export.Name)})
	factory := kcpinformers.NewSharedInformerFactoryWithOptions(kcp, 0,
		kcpinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	informer := factory.Apis().V1alpha2().APIBindings().Informer()
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    r.bindingChanged,
		UpdateFunc: func(_, obj any) { r.bindingChanged(obj) },
		DeleteFunc: r.bindingGone,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

// bindingChanged serves the binding's workspace once the binding is Bound.
func (r *Reconciler) bindingChanged(obj any) {
	b, ok := obj.(*apisv1alpha2.APIBinding)
	if !ok || b.Status.Phase != apisv1alpha2.APIBindingPhaseBound {
		return
	}
	name := logicalcluster.From(b)
	r.mu.Lock()
	r.workspaces[name] = true
	r.mu.Unlock()
	r.enqueue(name)
}

// bindingGone stops serving the workspace; the profiles kcp keeps for a
// binding made again are brought up to date then.
func (r *Reconciler) bindingGone(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if b, ok := obj.(*apisv1alpha2.APIBinding); ok {
		r.Forget(logicalcluster.From(b))
	}
}

func (r *Reconciler) enqueue(name logicalcluster.Name) {
	obj := &clusterv1beta1.MemberCluster{}
	obj.Name = name.String()
	select {
	case r.bound <- event.GenericEvent{Object: obj}:
	default:
		// Never hold up the informer (at a hub start every binding is
		// listed at once, before the controller runs).
		go func() { r.bound <- event.GenericEvent{Object: obj} }()
	}
}

// Forget drops a workspace that went away or no longer binds the export.
func (r *Reconciler) Forget(name logicalcluster.Name) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.workspaces, name)
}

func (r *Reconciler) serves(name logicalcluster.Name) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workspaces[name]
}

func (r *Reconciler) all() []logicalcluster.Name {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Keys(r.workspaces))
}

// everyWorkspace enqueues every workspace served, after coalesce.
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
