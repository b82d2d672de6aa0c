// Package resourcechange notices when a placeable object changes in any
// workspace and asks the placement controllers to reconcile the placements of
// that workspace that may select it, so that a new resource snapshot is taken.
// It watches each placeable resource once across all workspaces
// (kcp's /clusters/* wildcard, as the hub's privileged loopback identity),
// and the custom resources a workspace defines itself in that workspace.
package resourcechange

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	kcpdynamic "github.com/kcp-dev/client-go/dynamic"
	"github.com/kcp-dev/client-go/dynamic/dynamicinformer"
	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/workspaces/bootstrap"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// native are the placeable resources every workspace serves itself.
var native = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	crdResource,
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// envelopes are the placement-API kinds that are placed.
var envelopes = map[string]bool{"clusterresourceenvelopes": true, "resourceenvelopes": true}

// Detector turns object changes into placement reconcile requests.
type Detector struct {
	clusterPlacements, namespacedPlacements chan event.TypedGenericEvent[mcreconcile.Request]
	// workspaces gives the placements of one workspace from the cache.
	workspaces mcmanager.Manager
	// apisChanged is told when a workspace's own CRDs change, so that
	// cached discovery of its APIs is refreshed.
	apisChanged func(logicalcluster.Name)

	// epochs counts the changes of placeable objects seen per workspace,
	// once the watches have synced.
	epochMu sync.Mutex
	epochs  map[logicalcluster.Name]uint64
	// lastEpoch numbers the epochs of all workspaces: a workspace forgotten
	// and engaged again never gets back an epoch it had.
	lastEpoch uint64
	synced    atomic.Bool
}

// Epoch is a number that changes whenever a placeable object of workspace
// ws changes; ok is false until every watch has synced (changes may then
// go unseen). A placement whose workspace's epoch has not changed selects
// the same objects as before.
func (d *Detector) Epoch(ws logicalcluster.Name) (epoch uint64, ok bool) {
	if !d.synced.Load() {
		return 0, false
	}
	d.epochMu.Lock()
	defer d.epochMu.Unlock()
	return d.epochs[ws], true
}

func (d *Detector) bumpEpoch(ws logicalcluster.Name) {
	d.epochMu.Lock()
	defer d.epochMu.Unlock()
	if d.epochs == nil {
		d.epochs = map[logicalcluster.Name]uint64{}
	}
	d.lastEpoch++
	d.epochs[ws] = d.lastEpoch
}

// Forget drops the epoch of a workspace that went away. The watches of its
// own custom resources end with its CRDs' deletion; one that only stopped
// binding the placement APIs keeps them for when it binds again.
func (d *Detector) Forget(ws logicalcluster.Name) {
	d.epochMu.Lock()
	defer d.epochMu.Unlock()
	delete(d.epochs, ws)
}

// New returns a detector; Start runs it.
func New(mgr mcmanager.Manager, apisChanged func(logicalcluster.Name)) *Detector {
	return &Detector{
		clusterPlacements:    make(chan event.TypedGenericEvent[mcreconcile.Request], 1024),
		namespacedPlacements: make(chan event.TypedGenericEvent[mcreconcile.Request], 1024),
		workspaces:           mgr,
		apisChanged:          apisChanged,
	}
}

// Source feeds one placement controller (cluster-scoped or namespaced).
func (d *Detector) Source(namespaced bool) source.TypedSource[mcreconcile.Request] {
	ch := d.clusterPlacements
	if namespaced {
		ch = d.namespacedPlacements
	}
	return source.TypedChannel(ch, handler.TypedFuncs[mcreconcile.Request, mcreconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[mcreconcile.Request], q workqueue.TypedRateLimitingInterface[mcreconcile.Request]) {
			q.Add(e.Object)
		},
	})
}

// Start watches the placeable resources until ctx ends. fleet reads the
// APIExports of root:fleet, whose identities the wildcard watches of
// exported resources need.
func (d *Detector) Start(ctx context.Context, loopback *rest.Config, fleet client.Reader, exports ...string) error {
	gvrs := append([]schema.GroupVersionResource(nil), native...)
	for _, name := range exports {
		exported, err := exportedResources(ctx, fleet, name)
		if err != nil {
			return err
		}
		gvrs = append(gvrs, exported...)
	}
	dyn, err := kcpdynamic.NewForConfig(loopback)
	if err != nil {
		return err
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	for _, gvr := range gvrs {
		informer := factory.ForResource(gvr).Informer()
		transform := identityOnly
		if gvr == crdResource {
			transform = crdServing
		}
		if err := informer.SetTransform(transform); err != nil {
			return err
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { d.changed(ctx, obj) },
			UpdateFunc: func(_, obj any) { d.changed(ctx, obj) },
			DeleteFunc: func(obj any) { d.changed(ctx, obj) },
		}); err != nil {
			return err
		}
	}
	local := newLocalResources(ctx, dyn, func(ws logicalcluster.Name, obj any) { d.changedIn(ctx, ws, obj) }, d.apisChanged)
	if _, err := factory.ForResource(crdResource).Informer().AddEventHandler(local.handler()); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	go func() {
		synced := true
		for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				synced = false
				klog.FromContext(ctx).Info("watch did not sync", "resource", gvr)
			}
		}
		d.synced.Store(synced)
	}()
	return nil
}

// exportedResources lists what an APIExport serves, named with the export's
// identity as wildcard requests for bound resources require.
func exportedResources(ctx context.Context, c client.Reader, name string) ([]schema.GroupVersionResource, error) {
	export, err := bootstrap.ExportIdentity(ctx, c, name)
	if err != nil {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, r := range export.Spec.Resources {
		if r.Group == placementv1beta1.GroupVersion.Group && !envelopes[r.Name] {
			continue
		}
		version, err := storageVersion(ctx, c, r.Schema)
		if err != nil {
			return nil, err
		}
		out = append(out, schema.GroupVersionResource{Group: r.Group, Version: version, Resource: r.Name + ":" + export.Status.IdentityHash})
	}
	return out, nil
}

func storageVersion(ctx context.Context, c client.Reader, schemaName string) (string, error) {
	s := &apisv1alpha1.APIResourceSchema{}
	if err := c.Get(ctx, client.ObjectKey{Name: schemaName}, s); err != nil {
		return "", fmt.Errorf("reading APIResourceSchema %s: %w", schemaName, err)
	}
	for _, v := range s.Spec.Versions {
		if v.Storage {
			return v.Name, nil
		}
	}
	return "", fmt.Errorf("APIResourceSchema %s has no storage version", schemaName)
}

// changed enqueues the placements of the object's workspace that may select it.
func (d *Detector) changed(ctx context.Context, obj any) {
	if u, ok := unwrap(obj); ok {
		d.changedIn(ctx, logicalcluster.From(u), u)
	}
}

// changedIn enqueues the placements of workspace ws that may select obj.
func (d *Detector) changedIn(ctx context.Context, ws logicalcluster.Name, obj any) {
	u, ok := unwrap(obj)
	if !ok {
		return
	}
	// A workspace the hub does not serve (not bound yet, or going away)
	// has no placements to tell, and keeps no epoch.
	if _, err := d.workspaces.GetCluster(ctx, ws.String()); err != nil {
		return
	}
	// Before the placements are told, so that they see the new epoch.
	d.bumpEpoch(ws)
	for _, namespaced := range []bool{false, true} {
		for _, p := range d.placementsIn(ctx, ws, namespaced) {
			if maySelect(p, u) {
				req := mcreconcile.Request{ClusterName: ws.String(), Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.GetNamespace(), Name: p.GetName()}}}
				d.send(namespaced, req)
			}
		}
	}
}

// identityOnly keeps of a watched object only what says which placements
// may select it (kind, workspace, namespace, name, labels): the watches
// cover every workspace's ConfigMaps, Secrets, RBAC and more, whose
// contents the hub must not hold twice (the placement controller reads
// them when it selects).
func identityOnly(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	out.SetLabels(u.GetLabels())
	if ws, ok := u.GetAnnotations()[logicalcluster.AnnotationKey]; ok {
		out.SetAnnotations(map[string]string{logicalcluster.AnnotationKey: ws})
	}
	return out, nil
}

// crdServing keeps of a CRD its identity and what says which resource it
// serves (group, names, scope, versions served and stored, conditions):
// its schemas — most of a CRD, in every workspace — are not needed here.
func crdServing(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out, _ := identityOnly(u)
	crd := out.(*unstructured.Unstructured)
	for _, field := range [][]string{{"spec", "group"}, {"spec", "names"}, {"spec", "scope"}, {"status", "conditions"}} {
		if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, field...); found {
			_ = unstructured.SetNestedField(crd.Object, v, field...)
		}
	}
	field, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "versions")
	versions, _ := field.([]any)
	served := make([]any, 0, len(versions))
	for _, v := range versions {
		if v, ok := v.(map[string]any); ok {
			served = append(served, map[string]any{"name": v["name"], "served": v["served"], "storage": v["storage"]})
		}
	}
	_ = unstructured.SetNestedSlice(crd.Object, served, "spec", "versions")
	return crd, nil
}

// unwrap returns the object of a watch event, deleted ones included.
func unwrap(obj any) (*unstructured.Unstructured, bool) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}

func (d *Detector) send(namespaced bool, req mcreconcile.Request) {
	ch := d.clusterPlacements
	if namespaced {
		ch = d.namespacedPlacements
	}
	ch <- event.TypedGenericEvent[mcreconcile.Request]{Object: req}
}

// placementsIn lists a workspace's placements from the watch cache; a
// workspace that does not bind the placement API has none. They are the
// cache's own objects, read and never changed: a restarted hub sees every
// selected object of every workspace added, and copying the workspace's
// placements (with their status of 100 clusters) for each was an eighth
// of its CPU.
func (d *Detector) placementsIn(ctx context.Context, ws logicalcluster.Name, namespaced bool) []placementv1beta1.PlacementObj {
	cl, err := d.workspaces.GetCluster(ctx, ws.String())
	if err != nil {
		return nil
	}
	var list placementv1beta1.PlacementListObj = &placementv1beta1.ClusterResourcePlacementList{}
	if namespaced {
		list = &placementv1beta1.ResourcePlacementList{}
	}
	if err := clients.SyncedReader(cl.GetCache()).List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		// The epoch has moved: they re-select on their next reconcile.
		klog.FromContext(ctx).Error(err, "listing the placements a changed object may concern; they are not told of the change", "workspace", ws, "namespaced", namespaced)
		return nil
	}
	return list.GetPlacementObjs()
}

// maySelect is a cheap over-approximation of whether a placement selects an
// object: the placement controller resolves exactly.
func maySelect(p placementv1beta1.PlacementObj, u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	ns := u.GetNamespace()
	for _, t := range p.GetPlacementSpec().ResourceSelectors {
		switch {
		case p.GetNamespace() != "":
			if ns == p.GetNamespace() && t.Group == gvk.Group && t.Kind == gvk.Kind {
				return true
			}
		case t.Group == gvk.Group && t.Kind == gvk.Kind:
			return true
		case t.Kind == "Namespace" && t.Group == "" && ns != "" && (t.Name == "" || t.Name == ns):
			// Objects inside a selected namespace.
			return true
		}
	}
	return false
}
