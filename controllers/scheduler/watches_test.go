package scheduler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestBindingEventsPassTheLastAwaitedCreation(t *testing.T) {
	created := &placements.UnseenWrites[workspacePlacement]{}
	web := workspacePlacement{"ws1", placements.Key{Name: "web"}}
	created.Created(web, "web-b-1")
	created.Created(web, "web-c-1")
	events := bindingEvents{created: created}

	if events.Create(event.CreateEvent{Object: binding("ws1", "web", "web-b-1")}) {
		t.Error("the creation of web-b-1 enqueued the placement while web-c-1 is unseen")
	}
	if events.Create(event.CreateEvent{Object: binding("ws2", "web", "web-c-1")}) {
		t.Error("a binding of the same placement name in another workspace enqueued the placement")
	}
	if events.Create(event.CreateEvent{Object: binding("ws1", "other", "other-a-1")}) {
		t.Error("the creation of a binding nobody waits for enqueued its placement")
	}
	if !events.Create(event.CreateEvent{Object: binding("ws1", "web", "web-c-1")}) {
		t.Error("the creation of the last unseen binding did not enqueue the placement")
	}
	if wait := created.Wait(web, nil); wait != 0 {
		t.Errorf("the placement waits %v once every binding was seen, want 0", wait)
	}
	if events.Update(event.UpdateEvent{ObjectOld: binding("ws1", "web", "web-c-1"), ObjectNew: binding("ws1", "web", "web-c-1")}) {
		t.Error("a binding update passed")
	}
}
