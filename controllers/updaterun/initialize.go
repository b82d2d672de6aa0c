package updaterun

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/rollout"
)

// initialize plans a run: it freezes the strategy and the placement's
// apply strategy, and puts the scheduled clusters into stages in update
// order, with the overrides each gets; the clusters the scheduler dropped
// make the deletion stage.
func (r *Reconciler) initialize(ctx context.Context, c client.Client, run placementv1beta1.UpdateRunObj) (placementv1beta1.UpdateRunStatus, error) {
	var st placementv1beta1.UpdateRunStatus
	spec := run.GetUpdateRunSpec()
	p, err := r.placement(ctx, c, run)
	if err != nil {
		return st, err
	}
	k := placements.KeyOf(p)
	strategy := r.kinds().newStrategy()
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.GetNamespace(), Name: spec.StagedUpdateStrategyName}, strategy); err != nil {
		if apierrors.IsNotFound(err) {
			return st, waitFor("%s %q does not exist; create it or fix spec.stagedRolloutStrategyName", r.kinds().strategyKind(), spec.StagedUpdateStrategyName)
		}
		return st, err
	}
	policy, scheduled, unscheduled, err := r.schedule(ctx, c, k)
	if err != nil {
		return st, err
	}
	snapshot, err := r.resourceSnapshot(ctx, c, k, spec.ResourceSnapshotIndex)
	if err != nil {
		return st, err
	}
	members, err := r.members(ctx, scheduled)
	if err != nil {
		return st, err
	}
	stages := strategy.GetUpdateStrategySpec().DeepCopy()
	st.StagesStatus, err = planStages(run.GetName(), stages.Stages, members)
	if err != nil {
		return st, fail("%s %q cannot be applied to the clusters of %s %q: %v", r.kinds().strategyKind(), strategy.GetName(), r.kinds().placementKind(), p.GetName(), err)
	}
	if err := r.sameStrategyAsOthers(ctx, c, run, stages); err != nil {
		return st, err
	}
	want, err := rollout.ApplicableOverrides(ctx, r.Fleet, c, k, snapshot, scheduled)
	if err != nil {
		return st, err
	}
	for i := range st.StagesStatus {
		for j := range st.StagesStatus[i].Clusters {
			cl := &st.StagesStatus[i].Clusters[j]
			o := want[cl.ClusterName]
			cl.ClusterResourceOverrideSnapshots, cl.ResourceOverrideSnapshots = o.Cluster, o.Namespaced
		}
	}
	st.DeletionStageStatus = &placementv1beta1.StageUpdatingStatus{StageName: placementv1beta1.UpdateRunDeleteStageName}
	for _, b := range unscheduled {
		st.DeletionStageStatus.Clusters = append(st.DeletionStageStatus.Clusters, placementv1beta1.ClusterUpdatingStatus{ClusterName: b.GetBindingSpec().TargetCluster})
	}
	st.PolicySnapshotIndexUsed = policy.GetLabels()[placementv1beta1.PolicyIndexLabel]
	st.PolicyObservedClusterCount = observedClusterCount(policy, len(scheduled))
	st.ResourceSnapshotIndexUsed = snapshot.GetLabels()[placementv1beta1.ResourceIndexLabel]
	st.ApplyStrategy = p.GetPlacementSpec().Strategy.ApplyStrategy.DeepCopy()
	st.UpdateStrategySnapshot = stages
	return st, nil
}

// placement returns the run's placement, which must use the External
// rollout strategy and not be deleting.
func (r *Reconciler) placement(ctx context.Context, c client.Reader, run placementv1beta1.UpdateRunObj) (placementv1beta1.PlacementObj, error) {
	name := run.GetUpdateRunSpec().PlacementName
	p, err := placements.Get(ctx, c, r.Key(run.GetNamespace(), name))
	switch {
	case apierrors.IsNotFound(err):
		return nil, waitFor("%s %q does not exist; create it or fix spec.placementName", r.kinds().placementKind(), name)
	case err != nil:
		return nil, err
	case !p.GetDeletionTimestamp().IsZero():
		return nil, fail("%s %q is being deleted", r.kinds().placementKind(), name)
	case p.GetPlacementSpec().Strategy.Type != placementv1beta1.ExternalRolloutStrategyType:
		return nil, waitFor("%s %q rolls out by itself; set its spec.strategy.type to External to roll it out with update runs", r.kinds().placementKind(), name)
	}
	return p, nil
}

// schedule returns the placement's latest policy snapshot with the
// clusters it picked and those it dropped, once the scheduler has acted on
// it.
func (r *Reconciler) schedule(ctx context.Context, c client.Reader, k placements.Key) (placementv1beta1.PolicySnapshotObj, []placementv1beta1.BindingObj, []placementv1beta1.BindingObj, error) {
	policy, err := placements.LatestPolicySnapshot(ctx, c, k)
	if err != nil {
		return nil, nil, nil, err
	}
	if policy == nil {
		return nil, nil, nil, waitFor("%s %q is not scheduled yet", r.kinds().placementKind(), k.Name)
	}
	bindings, err := placements.Bindings(ctx, c, k)
	if err != nil {
		return nil, nil, nil, err
	}
	var scheduled, unscheduled []placementv1beta1.BindingObj
	for _, b := range bindings {
		spec := b.GetBindingSpec()
		switch {
		case !b.GetDeletionTimestamp().IsZero():
		case spec.State == placementv1beta1.BindingStateUnscheduled:
			unscheduled = append(unscheduled, b)
		case spec.SchedulingPolicySnapshotName != policy.GetName():
			// The scheduler has not caught up with the latest policy; its
			// next binding update brings the run back.
			return nil, nil, nil, waitFor("the scheduler has not finished scheduling %s %q", r.kinds().placementKind(), k.Name)
		default:
			scheduled = append(scheduled, b)
		}
	}
	if !decided(policy, scheduled) {
		return nil, nil, nil, waitFor("the scheduler has not finished scheduling %s %q", r.kinds().placementKind(), k.Name)
	}
	byCluster := func(bs []placementv1beta1.BindingObj) {
		sort.Slice(bs, func(i, j int) bool {
			return bs[i].GetBindingSpec().TargetCluster < bs[j].GetBindingSpec().TargetCluster
		})
	}
	byCluster(scheduled)
	byCluster(unscheduled)
	return policy, scheduled, unscheduled, nil
}

// decided tells whether the scheduler has acted on the policy snapshot:
// it recorded its decisions, and a binding exists for each cluster it
// picked (it creates them one by one).
func decided(policy placementv1beta1.PolicySnapshotObj, scheduled []placementv1beta1.BindingObj) bool {
	st := policy.GetPolicySnapshotStatus()
	if meta.FindStatusCondition(st.Conditions, string(placementv1beta1.PerClusterScheduledConditionType)) == nil {
		return false
	}
	var picked, bound []string
	for _, d := range st.ClusterDecisions {
		if d.Selected {
			picked = append(picked, d.ClusterName)
		}
	}
	for _, b := range scheduled {
		bound = append(bound, b.GetBindingSpec().TargetCluster)
	}
	added, removed := diff(picked, bound)
	return len(added)+len(removed) == 0
}

// observedClusterCount is the cluster count a policy asks for: N for PickN
// and PickFixed, the clusters picked for PickAll.
func observedClusterCount(policy placementv1beta1.PolicySnapshotObj, picked int) int {
	var n int
	if _, err := fmt.Sscan(policy.GetAnnotations()[placementv1beta1.NumberOfClustersAnnotation], &n); err == nil {
		return n
	}
	return picked
}

// resourceSnapshot returns the master snapshot of an index, or the latest.
func (r *Reconciler) resourceSnapshot(ctx context.Context, c client.Reader, k placements.Key, index string) (placementv1beta1.ResourceSnapshotObj, error) {
	if index == "" {
		latest, err := placements.LatestResourceSnapshot(ctx, c, k)
		if err == nil && latest == nil {
			err = waitFor("%s %q has no resource snapshot yet", r.kinds().placementKind(), k.Name)
		}
		return latest, err
	}
	name, err := masterSnapshotName(k.Name, index)
	if err != nil {
		return nil, err
	}
	snap := k.NewResourceSnapshot()
	err = c.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: name}, snap)
	if apierrors.IsNotFound(err) {
		return nil, fail("resource snapshot index %s of %s %q does not exist (older snapshots beyond the placement's revisionHistoryLimit are deleted); "+
			"list the kept ones with kubectl get %s -l %s=%s", index, r.kinds().placementKind(), k.Name, snapshotResource(k), placementv1beta1.PlacementTrackingLabel, k.Name)
	}
	return snap, err
}

func snapshotResource(k placements.Key) string {
	if k.Cluster() {
		return "clusterresourcesnapshots"
	}
	return "resourcesnapshots"
}

// masterSnapshotName names the master snapshot of a resource snapshot
// index given as text (an update run's spec and status carry it so).
func masterSnapshotName(placement, index string) (string, error) {
	n, err := strconv.Atoi(index)
	if err != nil || n < 0 {
		return "", fail("resource snapshot index %q of %q is not a number: set spec.resourceSnapshotIndex to the index label of one of its resource snapshots", index, placement)
	}
	return placementv1beta1.ResourceSnapshotName(placement, n), nil
}

// members reads the labels of the scheduled clusters from root:fleet.
func (r *Reconciler) members(ctx context.Context, scheduled []placementv1beta1.BindingObj) ([]member, error) {
	out := make([]member, 0, len(scheduled))
	for _, b := range scheduled {
		name := b.GetBindingSpec().TargetCluster
		mc := &clusterv1beta1.MemberCluster{}
		if err := r.Fleet.Get(ctx, client.ObjectKey{Name: name}, mc); apierrors.IsNotFound(err) {
			// It left the fleet; the scheduler drops it from the placement.
			return nil, waitFor("scheduled cluster %s is no longer a member cluster; waiting for the scheduler to drop it", name)
		} else if err != nil {
			return nil, err
		}
		out = append(out, member{name: name, labels: mc.Labels})
	}
	return out, nil
}

// sameStrategyAsOthers refuses a run whose strategy differs from that of a
// run still rolling out the same placement: concurrent runs must move the
// clusters in the same order, or clusters would run different versions.
func (r *Reconciler) sameStrategyAsOthers(ctx context.Context, c client.Reader, run placementv1beta1.UpdateRunObj, stages *placementv1beta1.UpdateStrategySpec) error {
	list := r.kinds().newRunList()
	var opts []client.ListOption
	if r.Namespaced {
		opts = append(opts, client.InNamespace(run.GetNamespace()))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	for _, other := range r.kinds().runsOf(list) {
		if other.GetName() == run.GetName() || other.GetUpdateRunSpec().PlacementName != run.GetUpdateRunSpec().PlacementName ||
			!initialized(other) || finished(other) {
			continue
		}
		if !equality.Semantic.DeepEqual(other.GetUpdateRunStatus().UpdateStrategySnapshot, stages) {
			return fail("%s %q is still rolling out %s %q with a different strategy; concurrent runs of one placement must use identical strategies, wait for it to finish or stop it",
				r.kinds().runKind(), other.GetName(), r.kinds().placementKind(), run.GetUpdateRunSpec().PlacementName)
		}
	}
	return nil
}

// applicable is the override list a cluster's binding gets.
func applicable(cl placementv1beta1.ClusterUpdatingStatus) overrides.Applicable {
	return overrides.Applicable{Cluster: cl.ClusterResourceOverrideSnapshots, Namespaced: cl.ResourceOverrideSnapshots}
}
