package v1alpha1

// UsageAnnotation, on the LogicalCluster "cluster" of a team's workspace,
// holds the team's use of the hub against its limits as JSON (TeamUsage).
// The hub writes it; the hub's admission refuses it from anyone else.
const UsageAnnotation = "tenancy.fleetplane.io/usage"

// TeamUsage is what a team keeps on the hub and what it may keep.
// +kubebuilder:object:generate=false
type TeamUsage struct {
	// Team is the team's workspace: the one a grant names, which its
	// child workspaces count towards.
	Team string `json:"team"`
	// Grants are the ClusterGrants in root:fleet that set the limits; none
	// means the hub's defaults.
	Grants []string   `json:"grants,omitempty"`
	Used   TeamCounts `json:"used"`
	Limits TeamCounts `json:"limits"`
}

// TeamCounts are amounts of what a team keeps on the hub.
// +kubebuilder:object:generate=false
type TeamCounts struct {
	Objects       int64 `json:"objects"`
	StorageBytes  int64 `json:"storageBytes"`
	Placements    int64 `json:"placements"`
	Overrides     int64 `json:"overrides"`
	SnapshotsKept int64 `json:"snapshotsKept,omitempty"`
}
