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

// Fleetplane: this file is not kcp-dev's. It lets the per-logical-cluster
// views of a cluster-wide informer share one listener.

package cache

import (
	"slices"
	"sync"

	"github.com/kcp-dev/logicalcluster/v3"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// Dispatchers hands each cluster-wide informer's events to the handlers of
// the logical cluster the object is in. Scoping an informer to a logical
// cluster the usual way adds a listener to the cluster-wide informer that
// drops the other clusters' objects: with controllers per workspace that is
// a listener (two goroutines and a buffer) per workspace and resource, and
// every event offered to all of them. A dispatcher is one listener per
// informer that looks the cluster's handlers up.
//
// The informers must index objects by ClusterIndexName. Handlers are called
// on the informer's listener goroutine, one after another: they must be
// quick, as controllers' handlers that only enqueue are, and must not add or
// remove handlers. Dispatched handlers get no periodic resyncs.
//
// A handler joining a running informer is given the cluster's objects from
// the informer's store, while events the listener has not delivered yet
// still come after them: it may see an object again, older than it was
// replayed, or a deletion of an object it never saw. Handlers that enqueue
// a key and read the current object when they process it are not affected.
type Dispatchers struct {
	lock       sync.Mutex
	byInformer map[cache.SharedIndexInformer]*dispatcher
}

// AddEventHandler registers handler for the objects of cluster in informer.
// A handler joining a running informer is first given what it holds of the
// cluster.
func (ds *Dispatchers) AddEventHandler(informer cache.SharedIndexInformer, cluster logicalcluster.Name, handler cache.ResourceEventHandler) (*DispatchedHandler, error) {
	ds.lock.Lock()
	defer ds.lock.Unlock()
	if d, ok := ds.byInformer[informer]; ok {
		return d.add(cluster, handler, true)
	}
	d := &dispatcher{informer: informer, byCluster: map[logicalcluster.Name][]*DispatchedHandler{}}
	// The informer delivers what it holds to a new listener: the first
	// handler is in place before it does.
	h, err := d.add(cluster, handler, false)
	if err != nil {
		return nil, err
	}
	registration, err := informer.AddEventHandlerWithResyncPeriod(d, 0)
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

// RemoveEventHandler unregisters h; the informer's listener goes with its
// last handler. Removing a handler twice is harmless.
func (ds *Dispatchers) RemoveEventHandler(h *DispatchedHandler) error {
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

// Handlers counts the handlers registered for cluster on informer, and
// tells whether the informer has a dispatcher's listener at all.
func (ds *Dispatchers) Handlers(informer cache.SharedIndexInformer, cluster logicalcluster.Name) (int, bool) {
	ds.lock.Lock()
	d, ok := ds.byInformer[informer]
	ds.lock.Unlock()
	if !ok {
		return 0, false
	}
	d.lock.RLock()
	defer d.lock.RUnlock()
	return len(d.byCluster[cluster]), true
}

// dispatcher is the listener on one cluster-wide informer.
type dispatcher struct {
	informer     cache.SharedIndexInformer
	registration cache.ResourceEventHandlerRegistration

	lock sync.RWMutex
	// byCluster holds a slice, not a set: a cluster has one to three
	// handlers on an informer, and a map per workspace and informer was
	// some hundred bytes more each.
	byCluster map[logicalcluster.Name][]*DispatchedHandler
}

// DispatchedHandler is a cluster's handler, and its registration.
type DispatchedHandler struct {
	dispatcher *dispatcher
	cluster    logicalcluster.Name
	handler    cache.ResourceEventHandler
	// removed is guarded by the Dispatchers' lock.
	removed bool
}

var _ cache.ResourceEventHandlerRegistration = &DispatchedHandler{}

// HasSynced is true once the informer has listed and its listener was
// handed the list: a handler added to a running dispatcher is given the
// objects of its cluster at once.
func (h *DispatchedHandler) HasSynced() bool {
	return h.dispatcher.informer.HasSynced() && h.dispatcher.registration.HasSynced()
}

// add registers a handler and, with replay, gives it what the informer
// holds of its cluster.
func (d *dispatcher) add(cluster logicalcluster.Name, handler cache.ResourceEventHandler, replay bool) (*DispatchedHandler, error) {
	h := &DispatchedHandler{dispatcher: d, cluster: cluster, handler: handler}
	d.lock.Lock()
	defer d.lock.Unlock()
	if replay {
		objs, err := d.informer.GetIndexer().ByIndex(ClusterIndexName, ClusterIndexKey(cluster))
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			handler.OnAdd(obj, true)
		}
	}
	d.byCluster[cluster] = append(d.byCluster[cluster], h)
	return h, nil
}

// remove unregisters h and tells whether it was the last handler.
func (d *dispatcher) remove(h *DispatchedHandler) bool {
	d.lock.Lock()
	defer d.lock.Unlock()
	hs := d.byCluster[h.cluster]
	if i := slices.Index(hs, h); i >= 0 {
		hs = slices.Delete(hs, i, i+1)
	}
	if len(hs) == 0 {
		delete(d.byCluster, h.cluster)
	} else {
		d.byCluster[h.cluster] = hs
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
	for _, h := range d.byCluster[cluster] {
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
		if cluster, _, _, err := SplitMetaClusterNamespaceKey(tombstone.Key); err == nil && cluster != "" {
			return cluster, true
		}
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return logicalcluster.From(m), true
}
