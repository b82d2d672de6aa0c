package placement

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// progressInterval is how often at most a placement's status is written
// while only its clusters' progress changes. A rollout to 100 clusters
// would otherwise write its status (100 clusters' conditions) after each
// step of each cluster; every write is decoded again by each watch and kept
// in the API server's watch cache. A change of the placement's own
// conditions, selection or resource index is written at once.
const progressInterval = time.Second

// statusWrites remembers when each placement's status was last written,
// and the resource version it was written from.
type statusWrites struct {
	mu   sync.Mutex
	last map[string]time.Time
	from map[string]string
}

// wait is how long to hold back a progress-only write of placement key.
func (s *statusWrites) wait(key string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.last[key]; ok {
		return last.Add(progressInterval).Sub(now)
	}
	return 0
}

// maxBehind bounds how long status writes wait for the cache to show the
// last one: a cache that never does (its watch stuck) must not freeze the
// placement's status.
const maxBehind = 5 * time.Second

// wrote records a status write of placement key made from resource
// version from that made it to. A write that changed nothing keeps the
// version: the cache will show no newer one to wait for.
func (s *statusWrites) wrote(key string, now time.Time, from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last, s.from = map[string]time.Time{}, map[string]string{}
	}
	s.last[key] = now
	if from != to {
		s.from[key] = from
	} else {
		delete(s.from, key)
	}
}

// behind tells whether the cache, which has placement key at resource
// version rv, does not show the last status write yet: it still has the
// version that write was made from. A write now would be made from that
// old version and conflict — on a loaded hub, forty conflicts per placement
// of 100 clusters, each a 150 KB request the API server decodes and checks
// against etcd before refusing it.
func (s *statusWrites) behind(key, rv string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, ok := s.from[key]
	if ok && (from != rv || now.Sub(s.last[key]) > maxBehind) {
		delete(s.from, key)
		return false
	}
	return ok
}

func (s *statusWrites) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, key)
	delete(s.from, key)
}

// onlyProgress tells whether next differs from prev in its clusters'
// details only: the same placement-level conditions (status, reason,
// generation), selected resources, resource index and clusters.
func onlyProgress(prev, next *placementv1beta1.PlacementStatus) bool {
	if prev.ObservedResourceIndex != next.ObservedResourceIndex ||
		!equality.Semantic.DeepEqual(prev.SelectedResources, next.SelectedResources) ||
		!sameConditions(prev.Conditions, next.Conditions) ||
		len(prev.PerClusterPlacementStatuses) != len(next.PerClusterPlacementStatuses) {
		return false
	}
	for i := range prev.PerClusterPlacementStatuses {
		if prev.PerClusterPlacementStatuses[i].ClusterName != next.PerClusterPlacementStatuses[i].ClusterName {
			return false
		}
	}
	return true
}

// sameConditions compares conditions by type, status, reason and observed
// generation (messages count clusters and change with progress).
func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].ObservedGeneration != b[i].ObservedGeneration {
			return false
		}
	}
	return true
}
