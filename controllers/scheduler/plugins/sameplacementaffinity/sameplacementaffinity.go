// Package sameplacementaffinity places a placement at most once per cluster
// and prefers clusters that already run it under an older policy.
package sameplacementaffinity

import (
	"context"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "SamePlacementAffinity"

// Plugin filters clusters that already hold an active binding of the
// placement and scores up clusters with an obsolete one, so that a policy
// change moves as few workloads as possible.
type Plugin struct{}

var (
	_ framework.FilterPlugin = Plugin{}
	_ framework.ScorePlugin  = Plugin{}
)

var alreadyPlaced = framework.Unschedulable("cluster already has a Scheduled or Bound binding of this placement")

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// Filter rejects clusters that hold an active binding on the current snapshot.
func (Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	if state.HasScheduledOrBoundBindingFor(cluster.Name) {
		return alreadyPlaced
	}
	return nil
}

// Score gives 1 obsolete placement affinity to clusters with an obsolete binding.
func (Plugin) Score(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) (framework.ClusterScore, *framework.Status) {
	if state.HasObsoleteBindingFor(cluster.Name) {
		return framework.ClusterScore{ObsoletePlacementAffinityScore: 1}, nil
	}
	return framework.ClusterScore{}, nil
}
