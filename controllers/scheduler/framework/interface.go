package framework

import (
	"context"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Plugin is the common part of every scheduler plugin. Plugins are shared by
// concurrent cycles, so per-cycle data goes into the CycleState, never into
// the plugin itself. The policy passed to every extension point is never nil
// and has a placement type set.
type Plugin interface {
	Name() string
}

// PostBatchPlugin caps how many clusters a PickN cycle picks at once before
// the pick-time plugins (see ReservePlugin) are evaluated again. It runs once
// per PickN cycle, after scoring; the smallest answer wins and 0 stops
// picking.
type PostBatchPlugin interface {
	Plugin
	PostBatch(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy) (int, *Status)
}

// PreFilterPlugin prepares the Filter stage once per cycle. Skip skips the
// plugin's Filter (and Reserve); ClusterUnschedulable rejects every cluster
// with the status' reasons (e.g. an invalid policy).
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy) *Status
}

// FilterPlugin rejects clusters that cannot take the placement.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *Status
}

// PreScorePlugin prepares the Score stage (PickN only) once per cycle, with
// the clusters that passed the filters. Skip skips the plugin's Score.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, feasible []*clusterv1beta1.MemberCluster) *Status
}

// ScorePlugin scores a feasible cluster (PickN only); higher is better.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) (ClusterScore, *Status)
}

// ReservePlugin marks a pick-time plugin: its verdict depends on the clusters
// picked earlier in the same cycle (topology spread). The framework runs the
// Filter and Score of such a plugin inside the PickN pick loop only, on the
// clusters still in the running, and calls Reserve for every cluster picked.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, policy *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *Status
}

// RetainPlugin decides whether a cluster may keep a binding it already holds.
// Scheduling terms are IgnoredDuringExecution, so only a few checks (the
// cluster left the fleet, the tenant lost its grant) take a binding away;
// ClusterUnschedulable unschedules the binding.
type RetainPlugin interface {
	Plugin
	Retain(ctx context.Context, state *CycleState, cluster *clusterv1beta1.MemberCluster) *Status
}
