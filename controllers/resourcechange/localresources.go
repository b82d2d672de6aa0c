package resourcechange

import (
	"context"
	"strings"
	"sync"

	kcpdynamic "github.com/kcp-dev/client-go/dynamic"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
)

// localResources follows the custom resources a workspace defines itself.
// The wildcard watches only cover what every workspace serves, so each
// established CRD gets a watch of its own, scoped to its workspace, that
// lives as long as the CRD.
type localResources struct {
	ctx         context.Context
	dyn         *kcpdynamic.ClusterClientset
	changed     func(ws logicalcluster.Name, obj any)
	apisChanged func(ws logicalcluster.Name)

	mu      sync.Mutex
	watches map[string]localWatch // by workspace and CRD name
}

type localWatch struct {
	gvr  schema.GroupVersionResource
	stop context.CancelFunc
}

func newLocalResources(ctx context.Context, dyn *kcpdynamic.ClusterClientset, changed func(logicalcluster.Name, any), apisChanged func(logicalcluster.Name)) *localResources {
	return &localResources{ctx: ctx, dyn: dyn, changed: changed, apisChanged: apisChanged, watches: map[string]localWatch{}}
}

// handler keeps the watches in line with the CRDs of every workspace.
func (l *localResources) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    l.crdChanged,
		UpdateFunc: func(_, obj any) { l.crdChanged(obj) },
		DeleteFunc: l.crdDeleted,
	}
}

func (l *localResources) crdChanged(obj any) {
	ws, crd, ok := asCRD(obj)
	if !ok {
		return
	}
	gvr, watchable := servedResource(crd)
	key := ws.String() + "/" + crd.Name
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, exists := l.watches[key]; exists {
		if watchable && w.gvr == gvr {
			return
		}
		w.stop()
		delete(l.watches, key)
	}
	l.apisChanged(ws)
	if watchable {
		l.watches[key] = l.watch(ws, gvr)
	}
}

func (l *localResources) crdDeleted(obj any) {
	ws, crd, ok := asCRD(obj)
	if !ok {
		return
	}
	key := ws.String() + "/" + crd.Name
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, exists := l.watches[key]; exists {
		w.stop()
		delete(l.watches, key)
	}
	l.apisChanged(ws)
}

func (l *localResources) watch(ws logicalcluster.Name, gvr schema.GroupVersionResource) localWatch {
	ctx, stop := context.WithCancel(l.ctx)
	informer := dynamicinformer.NewFilteredDynamicInformer(l.dyn.Cluster(ws.Path()), gvr, "", 0, toolscache.Indexers{}, nil).Informer()
	_ = informer.SetTransform(identityOnly) // fails only once started
	notify := func(obj any) { l.changed(ws, obj) }
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	})
	go informer.Run(ctx.Done())
	return localWatch{gvr: gvr, stop: stop}
}

// asCRD reads a CRD of a team's own; CRDs kcp keeps for API bindings
// (in system: logical clusters) are served by the wildcard watches.
func asCRD(obj any) (logicalcluster.Name, *apiextensionsv1.CustomResourceDefinition, bool) {
	u, ok := unwrap(obj)
	if !ok {
		return "", nil, false
	}
	ws := logicalcluster.From(u)
	if ws == "" || strings.HasPrefix(ws.String(), "system:") {
		return "", nil, false
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return "", nil, false
	}
	return ws, crd, true
}

// servedResource is the resource to watch for an established CRD: its
// storage version if served, else its first served version.
func servedResource(crd *apiextensionsv1.CustomResourceDefinition) (schema.GroupVersionResource, bool) {
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		return schema.GroupVersionResource{}, false
	}
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && (version == "" || v.Storage) {
			version = v.Name
		}
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
	return gvr, version != ""
}
