package placement

import (
	"testing"

	"k8s.io/client-go/tools/record"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// The event is recorded when the clusters still holding the placement
// change, not at every reconcile, and again after they were all cleared.
func TestRemovalPendingIsAnEventOnChange(t *testing.T) {
	recorder := record.NewFakeRecorder(10)
	p := &placementv1beta1.ClusterResourcePlacement{}
	var r removals
	for _, clusters := range [][]string{nil, {"member-2"}, {"member-2"}, {"member-2", "member-3"}, nil, nil, {"member-2"}} {
		r.report(recorder, "ws/app", p, clusters)
	}
	want := []string{
		"Normal PlacementRemovalPending Removing the placed resources from 1 cluster(s) (member-2)",
		"Normal PlacementRemovalPending Removing the placed resources from 2 cluster(s) (member-2, member-3)",
		"Normal PlacementRemovalPending Removing the placed resources from 1 cluster(s) (member-2)",
	}
	if len(recorder.Events) != len(want) {
		t.Fatalf("%d events, want %d", len(recorder.Events), len(want))
	}
	for _, w := range want {
		if got := <-recorder.Events; len(got) < len(w) || got[:len(w)] != w {
			t.Errorf("event %q, want it to start with %q", got, w)
		}
	}
}
