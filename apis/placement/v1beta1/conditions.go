package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kinds of the two placement APIs, as their conditions and events name them.
const (
	ClusterResourcePlacementKind = "ClusterResourcePlacement"
	ResourcePlacementKind        = "ResourcePlacement"
)

// PlacementKindOf names the kind of a placement (or of an object of its
// scope): ClusterResourcePlacements are cluster-scoped, ResourcePlacements
// live in a namespace.
func PlacementKindOf(p metav1.Object) string {
	if p.GetNamespace() == "" {
		return ClusterResourcePlacementKind
	}
	return ResourcePlacementKind
}

// PlacementCondition is one condition a placement reports per cluster and,
// aggregated over its clusters, at the top of its status: its type at each
// level, the reasons of the aggregate and the event recorded when the
// aggregate turns True. Adding a condition is one entry here and the code
// that decides it.
// +kubebuilder:object:generate=false
type PlacementCondition struct {
	PerCluster PerClusterPlacementConditionType
	// Top-level types of ClusterResourcePlacements and ResourcePlacements.
	Cluster    ClusterResourcePlacementConditionType
	Namespaced ResourcePlacementConditionType
	// Reasons of the top-level condition when every scheduled cluster has
	// the per-cluster condition True, when one has it False, and while one
	// has not reported it yet.
	TrueReason, FalseReason, UnknownReason string
	// EventReason is recorded on the placement when the top-level condition
	// turns True; empty for none.
	EventReason string
}

// TypeFor is the condition's top-level type on placement p.
func (c PlacementCondition) TypeFor(p metav1.Object) string {
	if p.GetNamespace() == "" {
		return string(c.Cluster)
	}
	return string(c.Namespaced)
}

// The placement conditions, per cluster and aggregated.
var (
	ScheduledCondition = PlacementCondition{
		PerCluster: PerClusterScheduledConditionType,
		Cluster:    ClusterResourcePlacementScheduledConditionType, Namespaced: ResourcePlacementScheduledConditionType,
		TrueReason: SchedulingPolicyFulfilledReason, FalseReason: SchedulingPolicyUnfulfilledReason, UnknownReason: SchedulePendingReason,
	}
	RolloutStartedCondition = PlacementCondition{
		PerCluster: PerClusterRolloutStartedConditionType,
		Cluster:    ClusterResourcePlacementRolloutStartedConditionType, Namespaced: ResourcePlacementRolloutStartedConditionType,
		TrueReason: RolloutStartedReason, FalseReason: RolloutNotStartedYetReason, UnknownReason: RolloutStartedUnknownReason,
		EventReason: PlacementRolloutStartedEventReason,
	}
	OverriddenCondition = PlacementCondition{
		PerCluster: PerClusterOverriddenConditionType,
		Cluster:    ClusterResourcePlacementOverriddenConditionType, Namespaced: ResourcePlacementOverriddenConditionType,
		TrueReason: OverrideNotSpecifiedReason, FalseReason: OverriddenFailedReason, UnknownReason: OverriddenPendingReason,
		EventReason: PlacementOverriddenSucceededEventReason,
	}
	WorkSynchronizedCondition = PlacementCondition{
		PerCluster: PerClusterWorkSynchronizedConditionType,
		Cluster:    ClusterResourcePlacementWorkSynchronizedConditionType, Namespaced: ResourcePlacementWorkSynchronizedConditionType,
		TrueReason: WorkSynchronizedReason, FalseReason: WorkNotSynchronizedYetReason, UnknownReason: WorkSynchronizedUnknownReason,
		EventReason: PlacementWorkSynchronizedEventReason,
	}
	AppliedCondition = PlacementCondition{
		PerCluster: PerClusterAppliedConditionType,
		Cluster:    ClusterResourcePlacementAppliedConditionType, Namespaced: ResourcePlacementAppliedConditionType,
		TrueReason: ApplySucceededReason, FalseReason: ApplyFailedReason, UnknownReason: ApplyPendingReason,
		EventReason: PlacementAppliedEventReason,
	}
	AvailableCondition = PlacementCondition{
		PerCluster: PerClusterAvailableConditionType,
		Cluster:    ClusterResourcePlacementAvailableConditionType, Namespaced: ResourcePlacementAvailableConditionType,
		TrueReason: AvailableReason, FalseReason: NotAvailableYetReason, UnknownReason: AvailableUnknownReason,
		EventReason: PlacementAvailableEventReason,
	}
	DiffReportedCondition = PlacementCondition{
		PerCluster: PerClusterDiffReportedConditionType,
		Cluster:    ClusterResourcePlacementDiffReportedConditionType, Namespaced: ResourcePlacementDiffReportedConditionType,
		TrueReason: DiffReportedStatusTrueReason, FalseReason: DiffReportedStatusFalseReason, UnknownReason: DiffReportedStatusUnknownReason,
		EventReason: PlacementDiffReportedEventReason,
	}
)

// The rollout conditions in the order a rollout reaches them: each only
// counts once the one before holds. Placements that apply end in
// Available; ReportDiff placements apply nothing and end in DiffReported.
var (
	ApplyRolloutConditions      = []PlacementCondition{RolloutStartedCondition, OverriddenCondition, WorkSynchronizedCondition, AppliedCondition, AvailableCondition}
	ReportDiffRolloutConditions = []PlacementCondition{RolloutStartedCondition, OverriddenCondition, WorkSynchronizedCondition, DiffReportedCondition}
)

// Event reasons recorded on placements.
const (
	PlacementRolloutStartedEventReason      = "PlacementRolloutStarted"
	PlacementOverriddenSucceededEventReason = "PlacementOverriddenSucceeded"
	PlacementWorkSynchronizedEventReason    = "PlacementWorkSynchronized"
	PlacementAppliedEventReason             = "PlacementApplied"
	PlacementAvailableEventReason           = "PlacementAvailable"
	PlacementDiffReportedEventReason        = "PlacementDiffReported"
	// PlacementRolloutCompletedEventReason follows PlacementAvailable.
	PlacementRolloutCompletedEventReason = "PlacementRolloutCompleted"
	// PlacementCleanupFinalizerRemovedEventReason: a deleted placement's
	// snapshots are gone and it is released.
	PlacementCleanupFinalizerRemovedEventReason = "PlacementCleanupFinalizerRemoved"
	// PlacementRemovalPendingEventReason names the clusters that still hold
	// what the placement placed there, though it no longer uses them (or
	// any, once it is deleted). Fleetplane's own: KubeFleet's status shows
	// no such thing, so it is an event rather than a condition.
	PlacementRemovalPendingEventReason = "PlacementRemovalPending"
)
