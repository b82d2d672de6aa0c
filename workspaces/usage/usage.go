// Package usage counts what each logical cluster keeps in the hub's etcd:
// objects, bytes as stored, and placements and overrides, from one read of
// etcd's keys and then a watch of them. It is how the hub holds teams to
// their limits without a quota controller per workspace (kcp's ResourceQuota
// costs every workspace a controller; this costs the hub one watch).
package usage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// Usage is what one logical cluster, or a team's clusters together, keep.
type Usage struct {
	Objects    int64 `json:"objects"`
	Bytes      int64 `json:"bytes"`
	Placements int64 `json:"placements"`
	Overrides  int64 `json:"overrides"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.Objects += o.Objects
	u.Bytes += o.Bytes
	u.Placements += o.Placements
	u.Overrides += o.Overrides
}

// PlacementGroup is the placement API group.
const PlacementGroup = "placement.kubernetes-fleet.io"

// Counted is what one object of the resource counts for: an object and
// its bytes, and a placement or an override. The hub's own bookkeeping of
// placements (snapshots, bindings, statuses, Works) counts for nothing: it
// grows with the clusters a placement picks, not with what a team writes,
// and is bounded by the team's placements and snapshots kept instead.
func Counted(gr schema.GroupResource) Usage {
	if gr.Group != PlacementGroup {
		return Usage{Objects: 1}
	}
	switch {
	case gr.Resource == "clusterresourceplacements" || gr.Resource == "resourceplacements":
		return Usage{Objects: 1, Placements: 1}
	case gr.Resource == "clusterresourceoverrides" || gr.Resource == "resourceoverrides":
		return Usage{Objects: 1, Overrides: 1}
	case hubBookkeeping.Has(gr.Resource):
		return Usage{}
	}
	return Usage{Objects: 1}
}

// hubBookkeeping are the placement API's resources only the hub writes.
var hubBookkeeping = sets.New(
	"clusterresourcebindings", "resourcebindings",
	"clusterresourcesnapshots", "resourcesnapshots",
	"clusterschedulingpolicysnapshots", "schedulingpolicysnapshots",
	"clusterresourceoverridesnapshots", "resourceoverridesnapshots",
	"clusterresourceplacementstatuses", "works",
)

// scanPage is how many keys one read of the first count asks etcd for.
const scanPage = 1000

// Meter keeps the counts. Run it; Of reads them.
type Meter struct {
	client *clientv3.Client
	prefix string // kcp's storage prefix and a slash

	mu       sync.RWMutex
	clusters map[logicalcluster.Name]*Usage
	synced   bool
}

// NewMeter returns a meter that counts nothing until it runs.
func NewMeter() *Meter { return &Meter{} }

// Of returns what the cluster keeps, and false until the first count is done.
func (m *Meter) Of(cluster logicalcluster.Name) (Usage, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if u := m.clusters[cluster]; u != nil {
		return *u, m.synced
	}
	return Usage{}, m.synced
}

// Clusters returns the logical clusters that store something.
func (m *Meter) Clusters() []logicalcluster.Name {
	m.mu.RLock()
	defer m.mu.RUnlock()
	names := make([]logicalcluster.Name, 0, len(m.clusters))
	for name := range m.clusters {
		names = append(names, name)
	}
	return names
}

// Sum returns what the clusters for which in is true keep together.
func (m *Meter) Sum(in func(logicalcluster.Name) bool) (Usage, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var sum Usage
	for name, u := range m.clusters {
		if in(name) {
			sum.Add(*u)
		}
	}
	return sum, m.synced
}

// Run counts what client's etcd stores below prefix (kcp's "/registry")
// until ctx ends: a full read, then the watch from there; a watch that
// breaks (etcd compacted past it, a lost connection) is followed by a new
// full read.
func (m *Meter) Run(ctx context.Context, client *clientv3.Client, prefix string) {
	m.client, m.prefix = client, strings.TrimSuffix(prefix, "/")+"/"
	logger := klog.FromContext(ctx).WithName("usage")
	for ctx.Err() == nil {
		rev, err := m.count(ctx)
		if err == nil {
			logger.Info("counted what the workspaces store", "revision", rev, "workspaces", len(m.Clusters()))
			err = m.follow(ctx, rev)
		}
		if ctx.Err() != nil {
			return
		}
		logger.Error(err, "counting what the workspaces store; counting again")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// count reads every key once, at one revision, and replaces the counts.
func (m *Meter) count(ctx context.Context) (int64, error) {
	counts := map[logicalcluster.Name]*Usage{}
	end := clientv3.GetPrefixRangeEnd(m.prefix)
	key, rev := m.prefix, int64(0)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(scanPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := m.client.Get(ctx, key, opts...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			m.apply(counts, kv.Key, 1, int64(len(kv.Value)))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	m.mu.Lock()
	m.clusters, m.synced = counts, true
	m.mu.Unlock()
	return rev, nil
}

var errLostPrevious = errors.New("etcd sent a change without the value it replaced")

// follow applies etcd's changes after rev until the watch ends.
func (m *Meter) follow(ctx context.Context, rev int64) error {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range m.client.Watch(ctx, m.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithPrevKV()) {
		if err := resp.Err(); err != nil {
			return err
		}
		m.mu.Lock()
		err := m.changes(resp.Events)
		m.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (m *Meter) changes(events []*clientv3.Event) error {
	for _, ev := range events {
		switch {
		case ev.Type == clientv3.EventTypePut && ev.IsCreate():
			m.apply(m.clusters, ev.Kv.Key, 1, int64(len(ev.Kv.Value)))
		case ev.PrevKv == nil:
			return errLostPrevious
		case ev.Type == clientv3.EventTypePut:
			m.apply(m.clusters, ev.Kv.Key, 0, int64(len(ev.Kv.Value)-len(ev.PrevKv.Value)))
		default:
			m.apply(m.clusters, ev.Kv.Key, -1, -int64(len(ev.PrevKv.Value)))
		}
	}
	return nil
}

// apply adds n objects of bytes in all to the counts of the key's cluster.
func (m *Meter) apply(counts map[logicalcluster.Name]*Usage, key []byte, n, bytes int64) {
	obj, ok := parseKey(string(key[len(m.prefix):]))
	if !ok {
		return
	}
	c := Counted(obj.resource)
	if c.Objects == 0 {
		return
	}
	u := counts[obj.cluster]
	if u == nil {
		u = &Usage{}
		counts[obj.cluster] = u
	}
	u.Objects += n
	u.Bytes += bytes
	u.Placements += n * c.Placements
	u.Overrides += n * c.Overrides
	if u.Objects <= 0 && u.Bytes <= 0 {
		delete(counts, obj.cluster)
	}
}
