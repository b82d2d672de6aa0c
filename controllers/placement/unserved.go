package placement

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// DefaultUnservedKindGrace is how long a placement keeps its last resource
// snapshot while a kind it selected is not served by its workspace: long
// enough for a hub restart, a CRD's schema change or a binding being
// re-established, after which the kind is taken as gone.
const DefaultUnservedKindGrace = 10 * time.Minute

// SelectedKindNotServedReason is the event reason of a placement whose last
// snapshot is kept because a kind it selected is not served right now.
const SelectedKindNotServedReason = "SelectedKindNotServed"

// kindNotServedError says that a kind the placement's last selection held is
// not served by the workspace now (a CRD being changed, discovery right
// after a restart): selecting without it would remove its objects from the
// members.
type kindNotServedError struct {
	gk    schema.GroupKind
	cause string
}

func (e *kindNotServedError) Error() string {
	return fmt.Sprintf("%s, which this placement selected, is not served by the workspace right now (%s)", e.gk, e.cause)
}

// selectedKinds are the kinds of a placement's last selection, with the
// namespaces they were selected in ("" for cluster-scoped ones).
type selectedKinds map[schema.GroupKind]map[string]bool

func selectedKindsOf(selected []placementv1beta1.ResourceIdentifier) selectedKinds {
	out := selectedKinds{}
	for _, id := range selected {
		gk := schema.GroupKind{Group: id.Group, Kind: id.Kind}
		if out[gk] == nil {
			out[gk] = map[string]bool{}
		}
		out[gk][id.Namespace] = true
	}
	return out
}

// unservedHolds remembers since when each placement has kept its last
// snapshot because a kind it selected is not served.
type unservedHolds struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// hold starts or continues holding a placement's snapshot, and tells how
// much of the grace is left; false once it is over.
func (h *unservedHolds) hold(key string, now time.Time, grace time.Duration) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.since == nil {
		h.since = map[string]time.Time{}
	}
	since, ok := h.since[key]
	if !ok {
		since = now
		h.since[key] = now
	}
	left := grace - now.Sub(since)
	return left, left > 0
}

func (h *unservedHolds) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.since, key)
}
