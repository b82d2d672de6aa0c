package workapplier

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// unsettledBackstop re-reconciles a Work that waits for the other Works of
// its placement even if none of them changes: they wake it as soon as one
// does.
const unsettledBackstop = time.Minute

// waiting remembers the Works that wait for the other Works of their
// placement to reach their resource snapshot (errUnsettled). A change of
// one of those Works wakes them at once: a backoff that grows with each try
// re-applied every manifest of a large Work again and again while the hub
// was still writing its siblings, and woke the last of them minutes late.
type waiting struct {
	mu sync.Mutex
	// owners maps a waiting Work's name to its placement's identity.
	owners map[string]string
}

func (w *waiting) add(work, identity string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.owners == nil {
		w.owners = map[string]string{}
	}
	w.owners[work] = identity
}

func (w *waiting) remove(work string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.owners, work)
}

// wake returns, and forgets, the Works other than changed that wait on
// changed's placement.
func (w *waiting) wake(changed, identity string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for work, id := range w.owners {
		if id == identity && work != changed {
			out = append(out, work)
			delete(w.owners, work)
		}
	}
	return out
}

// wakeSiblings maps a Work whose spec changed, or that came or went, to the
// Works of its placement that wait for it.
func (r *Reconciler) wakeSiblings(_ context.Context, work *placementv1beta1.Work) []reconcile.Request {
	var out []reconcile.Request
	for _, name := range r.waiting.wake(work.Name, ownerOf(work).identity) {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: work.Namespace, Name: name}})
	}
	return out
}
