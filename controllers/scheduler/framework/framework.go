package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Reasons and messages the framework writes; they follow KubeFleet's.
const (
	// PickedReason is the reason of every selected cluster decision.
	PickedReason = "picked by scheduling policy"

	notFoundReasonFormat      = "Specified cluster %q is not found"
	notHighEnoughReasonFormat = "Cluster \"%s\" does not score high enough (affinity score: %d, topology spread score: %d)"
	fulfilledMessageFormat    = "found all cluster needed as specified by the scheduling policy, found %d cluster(s)"
	notFulfilledMessageFormat = "could not find all clusters needed as specified by the scheduling policy, found %d cluster(s) instead"
	maxClusterDecisions       = 1000
	// maxUnselectedDecisions caps the clusters not picked that the policy
	// snapshot explains, as KubeFleet does: listing all 900 losers of a
	// PickN(100) over 1,000 clusters made the snapshot ~200 KB, written and
	// decoded by every watcher on each scheduling cycle.
	maxUnselectedDecisions = 20
)

// Input is everything one scheduling cycle needs; the controller gathers it.
type Input struct {
	// Placement identifies the placement in messages (e.g. "root:teams:a/ns/name").
	Placement string
	// Namespace is the namespace of a ResourcePlacement ("" for a
	// ClusterResourcePlacement); the namespace-affinity plugin only lets RPs onto
	// clusters that report this namespace in MemberCluster.status.namespaces.
	Namespace string
	// PolicySnapshotName and Policy come from the latest policy snapshot; a nil
	// Policy (or an empty placement type) means PickAll.
	PolicySnapshotName string
	Policy             *placementv1beta1.PlacementPolicy
	// NumberOfClusters is the PickN target (the snapshot's number-of-clusters
	// annotation); ignored for other placement types.
	NumberOfClusters int
	// Clusters are all MemberClusters of the fleet: the cache's own
	// objects, which plugins read and never change.
	Clusters []*clusterv1beta1.MemberCluster
	// Bindings are the placement's existing bindings.
	Bindings []Binding
	// Granted reports whether the placement's workspace may use a cluster
	// (tenant grant); required.
	Granted func(*clusterv1beta1.MemberCluster) bool
	// Now is the time of the cycle (heartbeat freshness).
	Now time.Time
}

// Binding is the scheduler's view of an existing binding.
type Binding struct {
	Name, TargetCluster, SchedulingPolicySnapshotName string
	// State is Scheduled, Bound or Unscheduled.
	State           placementv1beta1.BindingState
	ClusterDecision placementv1beta1.ClusterDecision
}

// BindingUpdate moves an existing binding to the current policy snapshot with
// a new decision.
type BindingUpdate struct {
	Name     string
	Decision placementv1beta1.ClusterDecision
	// Reschedule is set when the binding is Unscheduled and its cluster was
	// picked again: restore the state kept in the previous-binding-state
	// annotation (Scheduled if absent) instead of creating a second binding.
	// Otherwise the binding keeps its state.
	Reschedule bool
}

// Result is what the controller must persist. All lists are sorted.
type Result struct {
	// Create lists decisions for new bindings (state Scheduled), by cluster name.
	Create []placementv1beta1.ClusterDecision
	// Patch lists existing bindings to move to this policy snapshot / decision,
	// by binding name.
	Patch []BindingUpdate
	// Unschedule names existing bindings to mark Unscheduled (the rollout
	// removes them later).
	Unschedule []string
	// Decisions go to the policy snapshot status: selected clusters first, then
	// clusters not selected with the reason; at most 1000, each group by name.
	Decisions []placementv1beta1.ClusterDecision
	// Fulfilled, Reason and Message make the Scheduled condition of the policy
	// snapshot (SchedulingPolicyFulfilled / SchedulingPolicyUnfulfilled).
	Fulfilled       bool
	Reason, Message string
}

// Framework runs scheduling cycles with one profile. It keeps no per-cycle
// data, so one Framework serves concurrent cycles.
type Framework struct {
	profile *Profile
	// pickTime names the plugins registered for Reserve (see ReservePlugin).
	pickTime map[string]bool
}

// New returns a framework running the plugins of the profile.
func New(profile *Profile) *Framework {
	f := &Framework{profile: profile, pickTime: map[string]bool{}}
	for _, p := range profile.reserve {
		f.pickTime[p.Name()] = true
	}
	return f
}

// Schedule runs one scheduling cycle for a placement and returns the binding
// changes and the decisions to persist. It does not modify the input.
func (f *Framework) Schedule(ctx context.Context, in Input) (Result, error) {
	policy, err := normalizePolicy(&in)
	if err != nil {
		return Result{}, err
	}
	c := newCycle(ctx, f, &in, policy)
	if err := c.classifyBindings(); err != nil {
		return Result{}, err
	}
	switch policy.PlacementType {
	case placementv1beta1.PickAllPlacementType:
		err = c.pickAll()
	case placementv1beta1.PickNPlacementType:
		err = c.pickN(in.NumberOfClusters)
	default:
		err = c.pickFixed()
	}
	if err != nil {
		return Result{}, err
	}
	return c.result(), nil
}

// normalizePolicy fills in the PickAll default so plugins never see a nil
// policy, and rejects inputs no cycle can work with.
func normalizePolicy(in *Input) (*placementv1beta1.PlacementPolicy, error) {
	if in.Granted == nil {
		return nil, errors.New("scheduler input has no Granted function")
	}
	policy := in.Policy
	if policy == nil {
		policy = &placementv1beta1.PlacementPolicy{}
	}
	if policy.PlacementType == "" {
		defaulted := *policy
		defaulted.PlacementType = placementv1beta1.PickAllPlacementType
		policy = &defaulted
	}
	switch policy.PlacementType {
	case placementv1beta1.PickAllPlacementType, placementv1beta1.PickFixedPlacementType:
	case placementv1beta1.PickNPlacementType:
		if in.NumberOfClusters < 0 {
			return nil, fmt.Errorf("policy snapshot %s asks for %d clusters", in.PolicySnapshotName, in.NumberOfClusters)
		}
	default:
		return nil, fmt.Errorf("policy snapshot %s has unknown placement type %q", in.PolicySnapshotName, policy.PlacementType)
	}
	return policy, nil
}
