// Package release lets go of what the hub holds for a workspace once the
// workspace provider disengages it (the workspace was deleted, or stopped
// binding the placement APIs). The provider cancels the workspace's context
// then; what was set up for the workspace on shared informers, and what the
// hub keeps of it, would otherwise stay until the hub stops.
//
// The workspaces' event handlers are dispatched: the provider scopes the
// informers of all workspaces to one workspace by adding a listener per
// workspace and kind that drops the other workspaces' objects (~43 per team
// workspace, each offered every event of its kind); instead each shared
// informer gets one listener that hands an event to the handlers of the
// object's workspace. Dispatched handlers get no periodic resyncs (the
// controllers' 10-hour requeue of every object of every workspace).
package release

import (
	"context"
	"runtime/debug"
	"sync"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
)

var engagedWorkspaces = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "fleet_engaged_workspaces",
	Help: "Workspaces the hub's controllers serve now (those binding the placement APIs).",
})

var memoryReturns = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "fleet_memory_return_duration_seconds",
	Help:    "How long returning the hub's freed memory to the operating system took, after workspaces went away (a full garbage collection).",
	Buckets: prometheus.ExponentialBuckets(0.05, 2, 8),
})

func init() {
	ctrlmetrics.Registry.MustRegister(engagedWorkspaces, memoryReturns)
}

// Manager is the multicluster manager as the workspace provider sees it.
type Manager struct {
	mcmanager.Manager
	// Forget is told the name of each workspace that went away.
	Forget []func(logicalcluster.Name)
	// Wildcard is the provider's cache of all workspaces, whose informers
	// the workspaces' handlers are dispatched from. Without it each handler
	// is a listener of its own.
	Wildcard cache.Cache
	// ReturnMemoryAfter, when set, returns the memory the hub freed to the
	// operating system once no workspace went away for that long: the Go
	// runtime keeps freed memory for reuse, so a hub whose teams left would
	// keep the resident size of its busiest day. It must outlast what frees
	// a workspace's memory late (kcp's idle clients, dropped after one to
	// two minutes).
	ReturnMemoryAfter time.Duration

	dispatchers kcpcache.Dispatchers

	mu sync.Mutex
	// returnMemory is pushed back by each workspace that goes.
	returnMemory *time.Timer
	// released closes, by workspace, once the last engagement's Forget
	// hooks ran: a workspace engaged again right after it went must not
	// lose what its new engagement sets up.
	released map[string]chan struct{}
}

// Engage engages a workspace with event handlers that are removed from the
// shared informers when the workspace goes, then forgets it.
func (m *Manager) Engage(ctx context.Context, name string, cl cluster.Cluster) error {
	m.mu.Lock()
	if m.released == nil {
		m.released = map[string]chan struct{}{}
	}
	previous := m.released[name]
	released := make(chan struct{})
	m.released[name] = released
	m.mu.Unlock()
	if previous != nil {
		select {
		case <-previous:
		case <-ctx.Done():
		}
	}
	if err := m.Manager.Engage(ctx, name, &releasing{Cluster: cl, workspace: &workspace{name: logicalcluster.Name(name), ctx: ctx, manager: m}}); err != nil {
		close(released)
		return err
	}
	engagedWorkspaces.Inc()
	context.AfterFunc(ctx, func() {
		defer close(released)
		engagedWorkspaces.Dec()
		log.FromContext(ctx).V(1).Info("releasing a workspace that went away", "workspace", name)
		for _, forget := range m.Forget {
			forget(logicalcluster.Name(name))
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.released[name] == released {
			delete(m.released, name)
		}
		m.returnMemoryLater()
	})
	return nil
}

// returnMemoryLater (re)starts the wait before the hub's freed memory goes
// back to the operating system. Called with mu held.
func (m *Manager) returnMemoryLater() {
	if m.ReturnMemoryAfter <= 0 {
		return
	}
	if m.returnMemory == nil {
		m.returnMemory = time.AfterFunc(m.ReturnMemoryAfter, func() {
			start := time.Now()
			debug.FreeOSMemory()
			memoryReturns.Observe(time.Since(start).Seconds())
		})
		return
	}
	m.returnMemory.Reset(m.ReturnMemoryAfter)
}

// workspace is what a workspace's informers share: the context that ends
// when it goes, and the manager's dispatchers.
type workspace struct {
	name    logicalcluster.Name
	ctx     context.Context
	manager *Manager
}

// releasing is a workspace whose informers' event handlers last as long
// as its context.
type releasing struct {
	cluster.Cluster
	*workspace
}

func (r *releasing) GetCache() cache.Cache {
	return &releasingCache{Cache: r.Cluster.GetCache(), workspace: r.workspace}
}

type releasingCache struct {
	cache.Cache
	*workspace
}

func (c *releasingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	return c.informer(func(cc cache.Cache) (cache.Informer, error) { return cc.GetInformer(ctx, obj, opts...) })
}

func (c *releasingCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	return c.informer(func(cc cache.Cache) (cache.Informer, error) { return cc.GetInformerForKind(ctx, gvk, opts...) })
}

// informer is the workspace's informer got from its cache, with the shared
// informer behind it to dispatch handlers from.
func (c *releasingCache) informer(get func(cache.Cache) (cache.Informer, error)) (cache.Informer, error) {
	scoped, err := get(c.Cache)
	if err != nil {
		return nil, err
	}
	i := &releasingInformer{Informer: scoped, workspace: c.workspace}
	if c.manager != nil && c.manager.Wildcard != nil {
		shared, err := get(c.manager.Wildcard)
		if err != nil {
			return nil, err
		}
		// The wildcard cache's informers are client-go's; anything else
		// keeps a listener per handler.
		i.shared, _ = shared.(toolscache.SharedIndexInformer)
	}
	return i, nil
}

type releasingInformer struct {
	cache.Informer
	*workspace
	// shared is the informer of all workspaces, or nil.
	shared toolscache.SharedIndexInformer
}

// AddEventHandler dispatches the handler from the shared informer; it is
// removed when the workspace goes.
func (i *releasingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	if i.shared == nil {
		return i.removedWhenDone(i.Informer.AddEventHandler(h))
	}
	if err := i.ctx.Err(); err != nil {
		return nil, err
	}
	reg, err := i.manager.dispatchers.AddEventHandler(i.shared, i.name, h)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(i.ctx, func() {
		if err := i.manager.dispatchers.RemoveEventHandler(reg); err != nil {
			log.FromContext(i.ctx).Error(err, "removing the event handler of a workspace that went away")
		}
	})
	return reg, nil
}

// AddEventHandlerWithResyncPeriod gives handlers that want resyncs a
// listener of their own.
func (i *releasingInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	if resync == 0 {
		return i.AddEventHandler(h)
	}
	return i.removedWhenDone(i.Informer.AddEventHandlerWithResyncPeriod(h, resync))
}

func (i *releasingInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	if h, ok := reg.(*kcpcache.DispatchedHandler); ok {
		return i.manager.dispatchers.RemoveEventHandler(h)
	}
	return i.Informer.RemoveEventHandler(reg)
}

func (i *releasingInformer) removedWhenDone(reg toolscache.ResourceEventHandlerRegistration, err error) (toolscache.ResourceEventHandlerRegistration, error) {
	if err == nil {
		context.AfterFunc(i.ctx, func() {
			if err := i.Informer.RemoveEventHandler(reg); err != nil {
				log.FromContext(i.ctx).Error(err, "removing the event handler of a workspace that went away")
			}
		})
	}
	return reg, err
}
