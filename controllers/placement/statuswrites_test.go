package placement

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

func TestOnlyProgress(t *testing.T) {
	status := func(available metav1.ConditionStatus, msg string, clusterConds ...metav1.Condition) *placementv1beta1.PlacementStatus {
		return &placementv1beta1.PlacementStatus{
			ObservedResourceIndex:       "0",
			Conditions:                  []metav1.Condition{{Type: "ClusterResourcePlacementAvailable", Status: available, Reason: "r", Message: msg, ObservedGeneration: 1}},
			PerClusterPlacementStatuses: []placementv1beta1.PerClusterPlacementStatus{{ClusterName: "member-1", Conditions: clusterConds}},
		}
	}
	applied := metav1.Condition{Type: "Applied", Status: metav1.ConditionTrue}
	prev := status(metav1.ConditionUnknown, "pending on 2 cluster(s)")
	if !onlyProgress(prev, status(metav1.ConditionUnknown, "pending on 1 cluster(s)", applied)) {
		t.Error("a cluster's step (and the count in a message) is not progress only")
	}
	if onlyProgress(prev, status(metav1.ConditionTrue, "available", applied)) {
		t.Error("the placement turning Available is progress only")
	}
	next := status(metav1.ConditionUnknown, "pending on 2 cluster(s)")
	next.ObservedResourceIndex = "1"
	if onlyProgress(prev, next) {
		t.Error("a new resource index is progress only")
	}
	next = status(metav1.ConditionUnknown, "pending on 2 cluster(s)")
	next.PerClusterPlacementStatuses[0].ClusterName = "member-2"
	if onlyProgress(prev, next) {
		t.Error("another cluster is progress only")
	}
}

func TestStatusWritesHoldBackProgress(t *testing.T) {
	var s statusWrites
	now := time.Unix(100, 0)
	if w := s.wait("ws/web", now); w != 0 {
		t.Fatalf("the first write waits %s", w)
	}
	s.wrote("ws/web", now, "7", "8")
	if w := s.wait("ws/web", now.Add(300*time.Millisecond)); w != 700*time.Millisecond {
		t.Fatalf("a write 300ms later waits %s, want 700ms", w)
	}
	if w := s.wait("ws/web", now.Add(2*time.Second)); w > 0 {
		t.Fatalf("a write 2s later waits %s", w)
	}
	s.forget("ws/web")
	if w := s.wait("ws/web", now); w != 0 {
		t.Fatalf("a forgotten placement waits %s", w)
	}
}

func TestStatusWritesWaitForTheCacheToShowTheLastWrite(t *testing.T) {
	var s statusWrites
	now := time.Unix(100, 0)
	if s.behind("ws/web", "7", now) {
		t.Fatal("a placement never written is behind")
	}
	s.wrote("ws/web", now, "7", "8")
	if !s.behind("ws/web", "7", now.Add(time.Second)) {
		t.Error("a cache that still has the version the write was made from is not behind")
	}
	if s.behind("ws/web", "8", now.Add(time.Second)) {
		t.Error("a cache that shows a newer version is behind")
	}
	if s.behind("ws/web", "7", now.Add(time.Second)) {
		t.Error("once the cache moved on, an older version read again (a relist) still holds writes back")
	}
	s.wrote("ws/web", now, "8", "8")
	if s.behind("ws/web", "8", now.Add(time.Second)) {
		t.Error("a write that changed nothing (same version) waits for a version that never comes")
	}
	s.wrote("ws/web", now, "8", "9")
	if s.behind("ws/web", "8", now.Add(maxBehind+time.Second)) {
		t.Error("a cache that never shows the write holds the status back for good")
	}
}

// A cached status from before the last write is not taken for the current
// one, even when it equals the status wanted now (the write replaced it).
func TestWriteProgressWaitsForTheCacheBeforeComparing(t *testing.T) {
	r := &Reconciler{}
	now := time.Unix(100, 0)
	r.statusWrites.wrote("ws/web", now, "7", "8")
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "7"}}
	// Not written (no client): the cache still shows version 7.
	res, err := r.writeProgress(context.Background(), nil, p, p.Status, "ws/web", now.Add(10*time.Millisecond), nil)
	if err != nil || res.RequeueAfter != placements.ConflictRetry {
		t.Fatalf("writeProgress over a cache behind its last write = %+v, %v; want a requeue after %s", res, err, placements.ConflictRetry)
	}
	p.ResourceVersion = "8"
	if res, err := r.writeProgress(context.Background(), nil, p, p.Status, "ws/web", now.Add(20*time.Millisecond), nil); err != nil || !res.IsZero() {
		t.Fatalf("writeProgress of an unchanged status once the cache caught up = %+v, %v", res, err)
	}
}
