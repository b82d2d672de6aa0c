// Package tenantgrant keeps a placement on the clusters its workspace has
// been granted.
package tenantgrant

import (
	"context"
	"fmt"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "TenantGrant"

// Plugin filters clusters that are not granted and, since a grant is a
// security boundary rather than a scheduling preference, also takes existing
// bindings away from them.
type Plugin struct{}

var (
	_ framework.FilterPlugin = Plugin{}
	_ framework.RetainPlugin = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// Filter rejects clusters that are not granted.
func (Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	return check(state, cluster)
}

// Retain unschedules bindings on clusters whose grant was withdrawn.
func (Plugin) Retain(_ context.Context, state *framework.CycleState, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	return check(state, cluster)
}

func check(state *framework.CycleState, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	if state.IsGranted(cluster) {
		return nil
	}
	return framework.Unschedulable(fmt.Sprintf("cluster %q is not granted to this placement's workspace", cluster.Name))
}
