package framework

import (
	"time"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

// StateKey names a piece of plugin data in the CycleState; use the plugin name.
type StateKey string

// CycleInfo is what a CycleState is built from.
type CycleInfo struct {
	// Placement and Namespace identify the placement (Namespace is "" for a
	// ClusterResourcePlacement).
	Placement, Namespace string
	// Now is the time of the cycle.
	Now time.Time
	// Granted reports whether the placement's workspace may use a cluster.
	Granted func(*clusterv1beta1.MemberCluster) bool
	// ScheduledOrBound are the clusters that keep an active (Scheduled or Bound)
	// binding on the current policy snapshot.
	ScheduledOrBound []*clusterv1beta1.MemberCluster
	// Obsolete names the clusters with an active binding on an older snapshot.
	Obsolete []string
}

// CycleState carries the facts of one scheduling cycle and the data plugins
// pass between their own extension points. A cycle runs on one goroutine, so
// it needs no locking.
type CycleState struct {
	info             CycleInfo
	scheduledOrBound map[string]struct{}
	obsolete         map[string]struct{}
	// store is a slice: a cycle holds a few entries and plugins read them in
	// the pick loop, where scanning beats hashing.
	store []stateEntry
}

type stateEntry struct {
	key   StateKey
	value any
}

// NewCycleState returns the state of a cycle.
func NewCycleState(info CycleInfo) *CycleState {
	s := &CycleState{info: info}
	s.setBindings(info.ScheduledOrBound, info.Obsolete)
	return s
}

// setBindings records the clusters with active bindings; the framework learns
// them only after the Retain stage has run against this state.
func (s *CycleState) setBindings(scheduledOrBound []*clusterv1beta1.MemberCluster, obsolete []string) {
	s.info.ScheduledOrBound, s.info.Obsolete = scheduledOrBound, obsolete
	s.scheduledOrBound = make(map[string]struct{}, len(scheduledOrBound))
	for _, c := range scheduledOrBound {
		s.scheduledOrBound[c.Name] = struct{}{}
	}
	s.obsolete = make(map[string]struct{}, len(obsolete))
	for _, name := range obsolete {
		s.obsolete[name] = struct{}{}
	}
}

// Placement identifies the placement in messages.
func (s *CycleState) Placement() string { return s.info.Placement }

// Namespace is the namespace of a ResourcePlacement, "" for a ClusterResourcePlacement.
func (s *CycleState) Namespace() string { return s.info.Namespace }

// Now is the time of the cycle.
func (s *CycleState) Now() time.Time { return s.info.Now }

// IsGranted reports whether the placement's workspace may use the cluster.
func (s *CycleState) IsGranted(c *clusterv1beta1.MemberCluster) bool { return s.info.Granted(c) }

// ScheduledOrBoundClusters are the clusters that keep an active binding on the
// current policy snapshot.
func (s *CycleState) ScheduledOrBoundClusters() []*clusterv1beta1.MemberCluster {
	return s.info.ScheduledOrBound
}

// HasScheduledOrBoundBindingFor reports whether the cluster keeps an active
// binding on the current policy snapshot.
func (s *CycleState) HasScheduledOrBoundBindingFor(cluster string) bool {
	_, ok := s.scheduledOrBound[cluster]
	return ok
}

// HasObsoleteBindingFor reports whether the cluster has an active binding on
// an older policy snapshot.
func (s *CycleState) HasObsoleteBindingFor(cluster string) bool {
	_, ok := s.obsolete[cluster]
	return ok
}

// Read returns the plugin data stored under key.
func (s *CycleState) Read(key StateKey) (any, bool) {
	for i := range s.store {
		if s.store[i].key == key {
			return s.store[i].value, true
		}
	}
	return nil, false
}

// Write stores plugin data under key, replacing what was there.
func (s *CycleState) Write(key StateKey, v any) {
	for i := range s.store {
		if s.store[i].key == key {
			s.store[i].value = v
			return
		}
	}
	s.store = append(s.store, stateEntry{key: key, value: v})
}
