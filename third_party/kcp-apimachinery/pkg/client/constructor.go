/*
Copyright 2022 The KCP Authors.

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

package client

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"

	"k8s.io/client-go/rest"
)

// Constructor is a wrapper around a constructor method for the client of type R.
type Constructor[R any] struct {
	NewForConfigAndClient func(*rest.Config, *http.Client) (R, error)
}

// Cache is a client factory that caches previous results.
type Cache[R any] interface {
	ClusterOrDie(clusterPath logicalcluster.Path) R
	Cluster(clusterPath logicalcluster.Path) (R, error)
}

// clientIdleTime is how long a cached client stays unused before the cache
// drops it. Fleetplane: kcp's cache kept every client it made for as long as
// the process ran, so each logical cluster ever deleted left its clients
// (a full Kubernetes clientset is some 30 KB) in every controller that had
// used one. A client asked for again is made again.
var clientIdleTime = time.Minute

// NewCache creates a new client factory cache using the given constructor.
func NewCache[R any](cfg *rest.Config, client *http.Client, constructor *Constructor[R]) Cache[R] {
	return &clientCache[R]{
		cfg:         cfg,
		client:      client,
		constructor: constructor,

		RWMutex:              &sync.RWMutex{},
		clientsByClusterPath: map[logicalcluster.Path]*cachedClient[R]{},
		idleTime:             clientIdleTime,
	}
}

type clientCache[R any] struct {
	cfg         *rest.Config
	client      *http.Client
	constructor *Constructor[R]

	*sync.RWMutex
	clientsByClusterPath map[logicalcluster.Path]*cachedClient[R]
	// sweeping is true while a sweep is scheduled; guarded by the lock.
	sweeping bool
	idleTime time.Duration
}

type cachedClient[R any] struct {
	client R
	// lastUsed is when the client was last asked for, as a monotonic
	// time since the process started.
	lastUsed atomic.Int64
}

var processStart = time.Now()

func sinceStart() int64 { return int64(time.Since(processStart)) }

// ClusterOrDie returns a new client scoped to the given logical cluster, or panics if there
// is any error.
func (c *clientCache[R]) ClusterOrDie(clusterPath logicalcluster.Path) R {
	client, err := c.Cluster(clusterPath)
	if err != nil {
		// we ensure that the config is valid in the constructor, and we assume that any changes
		// we make to it during scoping will not make it invalid, in order to hide the error from
		// downstream callers (as it should forever be nil); this is slightly risky
		panic(err)
	}
	return client
}

// Cluster returns a new client scoped to the given logical cluster.
func (c *clientCache[R]) Cluster(clusterPath logicalcluster.Path) (R, error) {
	now := sinceStart()
	c.RLock()
	cached, exists := c.clientsByClusterPath[clusterPath]
	c.RUnlock()
	if exists {
		cached.lastUsed.Store(now)
		return cached.client, nil
	}

	cfg := SetCluster(rest.CopyConfig(c.cfg), clusterPath)
	instance, err := c.constructor.NewForConfigAndClient(cfg, c.client)
	if err != nil {
		var result R
		return result, err
	}

	c.Lock()
	defer c.Unlock()
	cached, exists = c.clientsByClusterPath[clusterPath]
	if exists {
		cached.lastUsed.Store(now)
		return cached.client, nil
	}

	cached = &cachedClient[R]{client: instance}
	cached.lastUsed.Store(now)
	c.clientsByClusterPath[clusterPath] = cached
	if !c.sweeping {
		c.sweeping = true
		time.AfterFunc(c.idleTime, c.sweep)
	}

	return instance, nil
}

// sweep drops the clients not asked for in idleTime, and comes back while
// any are left.
func (c *clientCache[R]) sweep() {
	c.Lock()
	defer c.Unlock()
	idleSince := sinceStart() - int64(c.idleTime)
	for path, cached := range c.clientsByClusterPath {
		if cached.lastUsed.Load() < idleSince {
			delete(c.clientsByClusterPath, path)
		}
	}
	c.sweeping = len(c.clientsByClusterPath) > 0
	if c.sweeping {
		time.AfterFunc(c.idleTime, c.sweep)
	}
}
