package workgenerator

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// reportGrace is how long a binding whose Works were just written waits for
// its member's first report before saying that they are being applied. The
// report mostly comes within it, and the binding's status is then written
// once, with the outcome, instead of once before it too: 100 status writes
// fewer for a placement on 100 clusters.
const reportGrace = 2 * time.Second

// maxRecentWrites bounds what recentWrites remembers: the bindings whose
// Works were written within the last reportGrace.
const maxRecentWrites = 100_000

// recentWrites remembers when each binding's Works were written, for
// reportGrace.
type recentWrites struct {
	clock   clock.PassiveClock
	written *cache.LRUExpireCache
}

func newRecentWrites(c clock.PassiveClock) *recentWrites {
	return &recentWrites{clock: c, written: cache.NewLRUExpireCacheWithClock(maxRecentWrites, c)}
}

// note records that the binding's Works were written now, unless they were
// written within reportGrace already: a binding rewritten more often than
// that still has its status written reportGrace after the first write.
func (r *recentWrites) note(binding mcreconcile.Request) {
	if _, ok := r.written.Get(binding); !ok {
		r.written.Add(binding, r.clock.Now(), reportGrace)
	}
}

// wait is how much longer the binding b may wait with writing its status st
// for its member's report: none once reportGrace has passed since its Works
// were written, when st says more than that they are being applied (a
// failure, or what the member reported already), or when b's status
// describes its current generation already (its Works were written again
// for another reason, such as a grant that now allows them, or an edit of a
// Work on the hub): what b says now may no longer hold, and only a first
// report of a generation waits.
func (r *recentWrites) wait(binding mcreconcile.Request, b placementv1beta1.BindingObj, st placementv1beta1.ResourceBindingStatus) time.Duration {
	at, ok := r.written.Get(binding)
	if !ok || !awaitingReport(st) || reported(b) {
		return 0
	}
	return max(0, reportGrace-r.clock.Since(at.(time.Time)))
}

// reported tells whether the binding's status describes its generation.
func reported(b placementv1beta1.BindingObj) bool {
	c := meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingWorkSynchronized))
	return c != nil && c.ObservedGeneration == b.GetGeneration()
}

// awaitingReport tells whether all a binding's status says is that its
// Works are written and the member has not reported on them yet.
func awaitingReport(st placementv1beta1.ResourceBindingStatus) bool {
	if !meta.IsStatusConditionTrue(st.Conditions, string(placementv1beta1.ResourceBindingWorkSynchronized)) {
		return false
	}
	for _, t := range []placementv1beta1.ResourceBindingConditionType{placementv1beta1.ResourceBindingApplied, placementv1beta1.ResourceBindingDiffReported} {
		if c := meta.FindStatusCondition(st.Conditions, string(t)); c != nil && c.Status == metav1.ConditionUnknown {
			return true
		}
	}
	return false
}
