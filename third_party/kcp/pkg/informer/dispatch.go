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
// of ClusterWithContext share one listener per cluster-wide informer (kcp
// scopes an informer to a workspace by adding a listener that drops the
// other workspaces' objects: with a garbage collector per workspace, a
// listener per workspace and resource).

package informer

import (
	"context"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/client-go/informers"
	"github.com/kcp-dev/logicalcluster/v3"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

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
	dispatchers *kcpcache.Dispatchers
	ctx         context.Context
}

// newDispatchedInformer scopes clusterWide to cluster. It does not use the
// informer's own Cluster, which for dynamic informers leaves a goroutine
// waiting for a context that never ends.
func newDispatchedInformer(ctx context.Context, ds *kcpcache.Dispatchers, clusterWide kcpinformers.GenericClusterInformer, cluster logicalcluster.Name) informers.GenericInformer {
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
	h, err := s.dispatchers.AddEventHandler(s.clusterWide, s.cluster, handler)
	if err == nil {
		context.AfterFunc(s.ctx, func() { _ = s.dispatchers.RemoveEventHandler(h) })
	}
	return h, err
}

func (s *dispatchedSharedIndexInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	if h, ok := handle.(*kcpcache.DispatchedHandler); ok {
		return s.dispatchers.RemoveEventHandler(h)
	}
	return s.SharedIndexInformer.RemoveEventHandler(handle)
}
