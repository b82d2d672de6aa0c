package main

// extraServedVersions lists, per kind, the versions served besides the stored
// v1beta1, as KubeFleet serves them. All versions share one schema.
var extraServedVersions = map[string][]string{
	"MemberCluster":                            {"v1"},
	"InternalMemberCluster":                    {"v1"},
	"ClusterResourcePlacement":                 {"v1"},
	"ResourcePlacement":                        {"v1"},
	"ClusterResourcePlacementStatus":           {"v1"},
	"ClusterResourceSnapshot":                  {"v1"},
	"ClusterSchedulingPolicySnapshot":          {"v1"},
	"ClusterResourceBinding":                   {"v1"},
	"Work":                                     {"v1"},
	"AppliedWork":                              {"v1"},
	"ClusterResourceOverride":                  {"v1", "v1alpha1"},
	"ClusterResourceOverrideSnapshot":          {"v1", "v1alpha1"},
	"ResourceOverride":                         {"v1", "v1alpha1"},
	"ResourceOverrideSnapshot":                 {"v1", "v1alpha1"},
	"ClusterStagedUpdateStrategy":              {"v1", "v1alpha1"},
	"ClusterStagedUpdateRun":                   {"v1", "v1alpha1"},
	"ClusterApprovalRequest":                   {"v1", "v1alpha1"},
	"StagedUpdateStrategy":                     {"v1"},
	"StagedUpdateRun":                          {"v1"},
	"ApprovalRequest":                          {"v1"},
	"ClusterResourcePlacementEviction":         {"v1alpha1"},
	"ClusterResourcePlacementDisruptionBudget": {"v1alpha1"},
}
