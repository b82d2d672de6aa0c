/*
Copyright 2026 The Fleetplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Fleetplane: this file is not kcp's. It lets the per-workspace informers
// of ClusterWithContext share one listener per cluster-wide informer.

package informer

import (
	"context"
	"sync"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/client-go/informers"
	"github.com/kcp-dev/logicalcluster/v3"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// dispatchers hands each cluster-wide informer's events to the handlers of
// the logical cluster the object is in. kcp scopes an informer to a
// workspace by adding a listener to the cluster-wide informer that drops
// the other workspaces' objects: with a garbage collector per workspace that
// is a listener (two goroutines and a 1,024-entry buffer) per workspace and
// resource, and every event offered to all of them. A dispatcher is one
// listener per informer that looks the workspace's handlers up.
type dispatchers struct {
	lock       sync.Mutex
	byInformer map[cache.SharedIndexInformer]*dispatcher
}

// handlerFor registers handler for the objects of cluster in informer.
func (ds *dispatchers) handlerFor(informer kcpcache.ScopeableSharedIndexInformer, cluster logicalcluster.Name, handler cache.ResourceEventHandler) (*dispatchedHandler, error) {
	ds.lock.Lock()
	defer ds.lock.Unlock()
	if d, ok := ds.byInformer[informer]; ok {
		return d.add(cluster, handler, true), nil
	}
	d := &dispatcher{informer: informer, byCluster: map[logicalcluster.Name]map[*dispatchedHandler]bool{}}
	// The informer delivers what it holds to a new listener: the first
	// handler is in place before it does.
	h := d.add(cluster, handler, false)
	registration, err := informer.AddEventHandler(d)
	if err != nil {
		return nil, err
	}
	d.registration = registration
	if ds.byInformer == nil {
		ds.byInformer = map[cache.SharedIndexInformer]*dispatcher{}
	}
	ds.byInformer[informer] = d
	return h, nil
}

// remove unregisters h; the informer's listener goes with its last handler.
func (ds *dispatchers) remove(h *dispatchedHandler) error {
	ds.lock.Lock()
	defer ds.lock.Unlock()
	if h.removed {
		return nil
	}
	h.removed = true
	d := h.dispatcher
	if !d.remove(h) {
		return nil
	}
	if ds.byInformer[d.informer] == d {
		delete(ds.byInformer, d.informer)
	}
	return d.informer.RemoveEventHandler(d.registration)
}

// dispatcher is the listener on one cluster-wide informer.
type dispatcher struct {
	informer     cache.SharedIndexInformer
	registration cache.ResourceEventHandlerRegistration

	lock      sync.RWMutex
	byCluster map[logicalcluster.Name]map[*dispatchedHandler]bool
}

// dispatchedHandler is a workspace's handler, and its registration.
type dispatchedHandler struct {
	dispatcher *dispatcher
	cluster    logicalcluster.Name
	handler    cache.ResourceEventHandler
	// removed is guarded by the dispatchers' lock.
	removed bool
}

// HasSynced is true once the informer's initial list reached the handler:
// a handler added to a running dispatcher is given the objects of its
// workspace at once.
func (h *dispatchedHandler) HasSynced() bool {
	return h.dispatcher.registration.HasSynced()
}

// add registers a handler and, with replay, gives it what the informer
// holds of its cluster. An object that changed while it was added may reach
// it twice, as an add and again as the change.
func (d *dispatcher) add(cluster logicalcluster.Name, handler cache.ResourceEventHandler, replay bool) *dispatchedHandler {
	h := &dispatchedHandler{dispatcher: d, cluster: cluster, handler: handler}
	d.lock.Lock()
	defer d.lock.Unlock()
	if replay {
		objs, _ := d.informer.GetIndexer().ByIndex(kcpcache.ClusterIndexName, kcpcache.ClusterIndexKey(cluster))
		for _, obj := range objs {
			handler.OnAdd(obj, true)
		}
	}
	if d.byCluster[cluster] == nil {
		d.byCluster[cluster] = map[*dispatchedHandler]bool{}
	}
	d.byCluster[cluster][h] = true
	return h
}

// remove unregisters h and tells whether it was the last handler.
func (d *dispatcher) remove(h *dispatchedHandler) bool {
	d.lock.Lock()
	defer d.lock.Unlock()
	delete(d.byCluster[h.cluster], h)
	if len(d.byCluster[h.cluster]) == 0 {
		delete(d.byCluster, h.cluster)
	}
	return len(d.byCluster) == 0
}

// handlers calls fn with each handler of obj's logical cluster.
func (d *dispatcher) handlers(obj interface{}, fn func(cache.ResourceEventHandler)) {
	cluster, ok := clusterOf(obj)
	if !ok {
		return
	}
	d.lock.RLock()
	defer d.lock.RUnlock()
	for h := range d.byCluster[cluster] {
		fn(h.handler)
	}
}

func (d *dispatcher) OnAdd(obj interface{}, isInInitialList bool) {
	d.handlers(obj, func(h cache.ResourceEventHandler) { h.OnAdd(obj, isInInitialList) })
}

func (d *dispatcher) OnUpdate(oldObj, newObj interface{}) {
	d.handlers(newObj, func(h cache.ResourceEventHandler) { h.OnUpdate(oldObj, newObj) })
}

func (d *dispatcher) OnDelete(obj interface{}) {
	d.handlers(obj, func(h cache.ResourceEventHandler) { h.OnDelete(obj) })
}

// clusterOf is the logical cluster of an object or of a deletion tombstone.
func clusterOf(obj interface{}) (logicalcluster.Name, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		cluster, _, _, err := kcpcache.SplitMetaClusterNamespaceKey(tombstone.Key)
		return cluster, err == nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return logicalcluster.From(m), true
}

// dispatchedInformer is a workspace's view of a cluster-wide informer whose
// handlers are dispatched, and removed when ctx ends.
type dispatchedInformer struct {
	informer *dispatchedSharedIndexInformer
	lister   cache.GenericLister
}

func (i *dispatchedInformer) Informer() cache.SharedIndexInformer { return i.informer }
func (i *dispatchedInformer) Lister() cache.GenericLister         { return i.lister }

type dispatchedSharedIndexInformer struct {
	// The workspace's part of the informer, to read; no handler is added to it.
	cache.SharedIndexInformer
	clusterWide kcpcache.ScopeableSharedIndexInformer
	cluster     logicalcluster.Name
	dispatchers *dispatchers
	ctx         context.Context
}

// newDispatchedInformer scopes clusterWide to cluster. It does not use the
// informer's own Cluster, which for dynamic informers leaves a goroutine
// waiting for a context that never ends.
func newDispatchedInformer(ctx context.Context, ds *dispatchers, clusterWide kcpinformers.GenericClusterInformer, cluster logicalcluster.Name) informers.GenericInformer {
	return &dispatchedInformer{
		informer: &dispatchedSharedIndexInformer{
			SharedIndexInformer: clusterWide.Informer().Cluster(cluster),
			clusterWide:         clusterWide.Informer(),
			cluster:             cluster,
			dispatchers:         ds,
			ctx:                 ctx,
		},
		lister: clusterWide.Lister().ByCluster(cluster),
	}
}

func (s *dispatchedSharedIndexInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithResyncPeriod(handler, 0)
}

// AddEventHandlerWithResyncPeriod dispatches handlers that want no resyncs
// (the garbage collector's); others get a listener of their own. Either
// goes when the workspace's context ends.
func (s *dispatchedSharedIndexInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	if s.ctx.Err() != nil {
		return nil, s.ctx.Err()
	}
	if resyncPeriod != 0 {
		registration, err := s.SharedIndexInformer.AddEventHandlerWithResyncPeriod(handler, resyncPeriod)
		if err == nil {
			context.AfterFunc(s.ctx, func() { _ = s.SharedIndexInformer.RemoveEventHandler(registration) })
		}
		return registration, err
	}
	h, err := s.dispatchers.handlerFor(s.clusterWide, s.cluster, handler)
	if err == nil {
		context.AfterFunc(s.ctx, func() { _ = s.dispatchers.remove(h) })
	}
	return h, err
}

func (s *dispatchedSharedIndexInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	if h, ok := handle.(*dispatchedHandler); ok {
		return s.dispatchers.remove(h)
	}
	return s.SharedIndexInformer.RemoveEventHandler(handle)
}
