package placement

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// removalsComponent is the source of the PlacementRemovalPending events.
// It is not the controller's own: client-go's spam filter lets 25 events
// through per source, object and type, then one per five minutes, and a
// placement's rollout events would use up what a pending removal needs.
const removalsComponent = ControllerName + "-removals"

// removals remembers, per placement, the clusters last reported as still
// holding what it placed, so that the event is recorded when they change
// rather than at every reconcile. It lives in memory: after a hub restart
// the clusters are reported once more.
type removals struct {
	mu   sync.Mutex
	last map[string]string
}

// report records a PlacementRemovalPending event on p when the clusters
// whose removal is pending changed to a non-empty set.
func (r *removals) report(recorder record.EventRecorder, key string, p client.Object, clusters []string) {
	joined := strings.Join(clusters, ", ")
	r.mu.Lock()
	changed := r.last[key] != joined
	if joined == "" {
		delete(r.last, key)
	} else {
		if r.last == nil {
			r.last = map[string]string{}
		}
		r.last[key] = joined
	}
	r.mu.Unlock()
	if changed && joined != "" {
		recorder.Eventf(p, corev1.EventTypeNormal, placementv1beta1.PlacementRemovalPendingEventReason,
			"Removing the placed resources from %d cluster(s) (%s): each goes once its member has deleted them; objects held by finalizers on a member keep it waiting",
			len(clusters), joined)
	}
}

// forget drops a placement that is gone.
func (r *removals) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, key)
}
