package rollout

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// InFlight remembers, per key (a placement, an update run), the bindings a
// controller wrote that the cache does not show written yet (they still
// have the resource version they were written from). A reconcile that read
// such a cache planned on a binding's old state: it wrote it again (a
// conflict, 40 per placement of 100 clusters) and could count it as not yet
// bound, or as done with its old spec.
type InFlight struct {
	mu          sync.Mutex
	byPlacement map[string]map[types.UID]string
}

// Wrote records that binding uid was written from resource version from.
func (f *InFlight) Wrote(key string, uid types.UID, from string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byPlacement == nil {
		f.byPlacement = map[string]map[types.UID]string{}
	}
	if f.byPlacement[key] == nil {
		f.byPlacement[key] = map[types.UID]string{}
	}
	f.byPlacement[key][uid] = from
}

// Pending tells whether any of the placement's bindings, as the cache has
// them, does not show this controller's last write yet; it forgets the
// writes the cache shows and the bindings that are gone.
func (f *InFlight) Pending(key string, bindings []placementv1beta1.BindingObj) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	written := f.byPlacement[key]
	if len(written) == 0 {
		return false
	}
	current := map[types.UID]bool{}
	pending := false
	for _, b := range bindings {
		current[b.GetUID()] = true
		if from, ok := written[b.GetUID()]; ok {
			if from == b.GetResourceVersion() {
				pending = true
			} else {
				delete(written, b.GetUID())
			}
		}
	}
	for uid := range written {
		if !current[uid] {
			delete(written, uid)
		}
	}
	if len(written) == 0 {
		delete(f.byPlacement, key)
	}
	return pending
}

// Forget drops a key that is gone.
func (f *InFlight) Forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byPlacement, key)
}
