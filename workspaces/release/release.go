// Package release lets go of what the hub holds for a workspace once the
// workspace provider disengages it (the workspace was deleted, or stopped
// binding the placement APIs). The provider cancels the workspace's context
// then; what was set up for the workspace on shared informers, and what the
// hub keeps of it, would otherwise stay until the hub stops.
package release

import (
	"context"
	"sync"
	"time"

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

func init() {
	ctrlmetrics.Registry.MustRegister(engagedWorkspaces)
}

// Manager is the multicluster manager as the workspace provider sees it.
type Manager struct {
	mcmanager.Manager
	// Forget is told the name of each workspace that went away.
	Forget []func(logicalcluster.Name)

	mu sync.Mutex
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
	if err := m.Manager.Engage(ctx, name, &releasing{Cluster: cl, ctx: ctx}); err != nil {
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
	})
	return nil
}

// releasing is a workspace whose informers' event handlers last as long
// as ctx.
type releasing struct {
	cluster.Cluster
	ctx context.Context
}

func (r *releasing) GetCache() cache.Cache {
	return &releasingCache{Cache: r.Cluster.GetCache(), ctx: r.ctx}
}

type releasingCache struct {
	cache.Cache
	ctx context.Context
}

func (c *releasingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &releasingInformer{Informer: i, ctx: c.ctx}, nil
}

func (c *releasingCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	return &releasingInformer{Informer: i, ctx: c.ctx}, nil
}

type releasingInformer struct {
	cache.Informer
	ctx context.Context
}

func (i *releasingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.removedWhenDone(i.Informer.AddEventHandler(h))
}

func (i *releasingInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.removedWhenDone(i.Informer.AddEventHandlerWithResyncPeriod(h, resync))
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
