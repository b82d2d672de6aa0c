package v1alpha1

import "github.com/kcp-dev/logicalcluster/v3"

// The hub's workspace topology.
var (
	// FleetWorkspace is the platform's workspace: MemberClusters,
	// ClusterGrants, the APIExports teams bind, and the members' Work homes
	// beneath it. Its placements may use every member cluster.
	FleetWorkspace = logicalcluster.NewPath("root:fleet")
	// TeamsWorkspace holds the teams' workspaces, root:teams:<team>.
	TeamsWorkspace = logicalcluster.NewPath("root:teams")
)
