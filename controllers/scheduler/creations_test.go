package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/event"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

func binding(ws, placement, name string) *placementv1beta1.ClusterResourceBinding {
	return &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{placementv1beta1.PlacementTrackingLabel: placement},
		Annotations: map[string]string{"kcp.io/cluster": ws},
	}}
}

func TestCreationsHoldAPlacementUntilItsBindingsAreSeen(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	c := newCreations()
	c.now = func() time.Time { return now }
	web, other := placements.Key{Name: "web"}, placements.Key{Name: "other"}
	for _, name := range []string{"web-a-1", "web-b-1", "web-c-1"} {
		c.expect("ws1", web, name)
	}

	// The cache shows one of the three: a cycle now would bind b and c again.
	listed := []placementv1beta1.BindingObj{binding("ws1", "web", "web-a-1")}
	if wait := c.wait("ws1", web, listed); wait != unseenCreationsTimeout {
		t.Fatalf("wait with two bindings unseen = %v, want %v", wait, unseenCreationsTimeout)
	}
	if wait := c.wait("ws2", web, nil); wait != 0 {
		t.Errorf("the same placement name in another workspace waits %v, want 0", wait)
	}
	if wait := c.wait("ws1", other, nil); wait != 0 {
		t.Errorf("another placement waits %v, want 0", wait)
	}

	// Creation events: only the last one the placement waits for passes.
	events := bindingEvents{created: c}
	if events.Create(event.CreateEvent{Object: binding("ws1", "web", "web-b-1")}) {
		t.Error("the creation of web-b-1 enqueued the placement while web-c-1 is unseen")
	}
	if events.Create(event.CreateEvent{Object: binding("ws1", "other", "other-a-1")}) {
		t.Error("the creation of a binding nobody waits for enqueued its placement")
	}
	if !events.Create(event.CreateEvent{Object: binding("ws1", "web", "web-c-1")}) {
		t.Error("the creation of the last unseen binding did not enqueue the placement")
	}
	if wait := c.wait("ws1", web, nil); wait != 0 {
		t.Errorf("wait once every binding was seen = %v, want 0", wait)
	}
}

func TestCreationsWaitIsBounded(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	c := newCreations()
	c.now = func() time.Time { return now }
	web := placements.Key{Name: "web"}
	c.expect("ws1", web, "web-a-1")
	now = now.Add(30 * time.Second)
	if wait := c.wait("ws1", web, nil); wait != unseenCreationsTimeout-30*time.Second {
		t.Fatalf("wait after 30s = %v, want %v", wait, unseenCreationsTimeout-30*time.Second)
	}
	// A binding deleted before the cache showed it is never shown.
	now = now.Add(unseenCreationsTimeout)
	if wait := c.wait("ws1", web, nil); wait != 0 {
		t.Fatalf("wait past the timeout = %v, want 0", wait)
	}
	if len(c.pending) != 0 {
		t.Errorf("an expired placement is still remembered: %v", c.pending)
	}
}

func TestCreationsForgetOnlyRefusedCreations(t *testing.T) {
	web := placements.Key{Name: "web"}
	gr := schema.GroupResource{Group: placementv1beta1.GroupVersion.Group, Resource: "clusterresourcebindings"}
	tests := []struct {
		name    string
		err     error
		waiting bool
	}{
		{"refused as invalid", apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "ClusterResourceBinding"}, "web-a-1", nil), false},
		{"refused, wrapped", errors.Join(errors.New("binding web"), apierrors.NewForbidden(gr, "web-a-1", errors.New("no"))), false},
		{"server timeout: may have been created", apierrors.NewServerTimeout(gr, "create", 1), true},
		{"connection lost: may have been created", context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCreations()
			c.expect("ws1", web, "web-a-1")
			c.failed("ws1", web, "web-a-1", tt.err)
			if waiting := c.wait("ws1", web, nil) > 0; waiting != tt.waiting {
				t.Errorf("waiting = %v, want %v", waiting, tt.waiting)
			}
		})
	}
}
