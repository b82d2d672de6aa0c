package placement

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
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
	s.wrote("ws/web", now)
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
