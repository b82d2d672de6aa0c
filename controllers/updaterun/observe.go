package updaterun

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

// observe reads what the run's next step depends on, and fails the run if
// the placement moved away from its plan: another scheduling policy, another
// cluster count or set of scheduled clusters, another apply strategy.
func (r *Reconciler) observe(ctx context.Context, c client.Reader, run placementv1beta1.UpdateRunObj) (world, error) {
	st := run.GetUpdateRunStatus()
	w := world{now: time.Now(), run: run.GetName(), generation: run.GetGeneration(), state: run.GetUpdateRunSpec().State}
	p, err := r.placement(ctx, c, run)
	if err != nil {
		return w, err
	}
	k := placements.KeyOf(p)
	kind := r.kinds().placementKind()
	policy, err := placements.LatestPolicySnapshot(ctx, c, k)
	if err != nil {
		return w, err
	}
	if policy == nil || policy.GetLabels()[placementv1beta1.PolicyIndexLabel] != st.PolicySnapshotIndexUsed {
		return w, fail("the scheduling policy of %s %q changed after the run was initialized (policy snapshot index %s)", kind, k.Name, st.PolicySnapshotIndexUsed)
	}
	bindings, err := placements.Bindings(ctx, c, k)
	if err != nil {
		return w, err
	}
	w.listed = bindings
	w.bindings, w.deleting = map[string]placementv1beta1.BindingObj{}, map[string]bool{}
	var scheduled []string
	for _, b := range bindings {
		spec := b.GetBindingSpec()
		switch {
		case !b.GetDeletionTimestamp().IsZero():
			w.deleting[spec.TargetCluster] = true
			continue
		case spec.State != placementv1beta1.BindingStateUnscheduled:
			scheduled = append(scheduled, spec.TargetCluster)
		}
		if prev := w.bindings[spec.TargetCluster]; prev == nil || prev.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			w.bindings[spec.TargetCluster] = b
		}
	}
	if n := observedClusterCount(policy, len(scheduled)); n != st.PolicyObservedClusterCount {
		return w, fail("the cluster count of %s %q changed from %d to %d after the run was initialized", kind, k.Name, st.PolicyObservedClusterCount, n)
	}
	if added, removed := diff(planned(st), scheduled); len(added)+len(removed) > 0 {
		return w, fail("the clusters scheduled for %s %q changed after the run was initialized (%s)", kind, k.Name, describeChange(added, removed))
	}
	if !equality.Semantic.DeepEqual(p.GetPlacementSpec().Strategy.ApplyStrategy, st.ApplyStrategy) {
		return w, fail("the apply strategy of %s %q changed after the run was initialized", kind, k.Name)
	}
	if w.snapshot, err = masterSnapshotName(k.Name, st.ResourceSnapshotIndexUsed); err != nil {
		return w, err
	}
	w.strategy = st.ApplyStrategy
	w.reportDiff = st.ApplyStrategy != nil && st.ApplyStrategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff
	w.approvals, err = r.approvals(ctx, c, run)
	return w, err
}

// planned are the clusters the run's stages update.
func planned(st *placementv1beta1.UpdateRunStatus) []string {
	var out []string
	for _, s := range st.StagesStatus {
		for _, c := range s.Clusters {
			out = append(out, c.ClusterName)
		}
	}
	return out
}

// diff returns what now has that was does not, and the reverse, sorted.
func diff(was, now []string) (added, removed []string) {
	for _, n := range now {
		if !slices.Contains(was, n) {
			added = append(added, n)
		}
	}
	for _, n := range was {
		if !slices.Contains(now, n) {
			removed = append(removed, n)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}

func describeChange(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added: "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed: "+strings.Join(removed, ", "))
	}
	return strings.Join(parts, "; ")
}
