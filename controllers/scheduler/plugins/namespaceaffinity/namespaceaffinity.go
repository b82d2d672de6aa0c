// Package namespaceaffinity keeps a ResourcePlacement on the clusters that
// have its namespace, since its resources can only land in that namespace.
package namespaceaffinity

import (
	"context"
	"fmt"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "NamespaceAffinity"

// Plugin filters clusters that do not report the placement's namespace in
// MemberCluster.status.namespaces.
type Plugin struct{}

var (
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// PreFilter skips ClusterResourcePlacements, which have no namespace.
func (Plugin) PreFilter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy) *framework.Status {
	if state.Namespace() == "" {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Filter rejects clusters without the namespace.
func (Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	if _, ok := cluster.Status.Namespaces[state.Namespace()]; ok {
		return nil
	}
	return framework.Unschedulable(fmt.Sprintf("namespace %q does not exist on the cluster", state.Namespace()))
}
