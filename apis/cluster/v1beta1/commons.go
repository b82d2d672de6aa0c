package v1beta1

// Well-known names shared by the hub and member agents. They are part of the
// wire contract with KubeFleet tooling, so the values must not change.

const (
	// fleetPrefix prefixes all fleet-owned label, annotation and finalizer keys.
	fleetPrefix = "kubernetes-fleet.io/"

	// MemberClusterFinalizer holds a MemberCluster until its reserved
	// namespace and agents have been cleaned up.
	MemberClusterFinalizer = fleetPrefix + "membercluster-finalizer"

	// ClusterProfileCleanupFinalizer guards the ClusterProfile mirrored from
	// a MemberCluster.
	ClusterProfileCleanupFinalizer = fleetPrefix + "cluster-profile-cleanup"

	// MemberClusterNameLabel is set on every MemberCluster to its own name so
	// that overrides can target a single cluster with a label selector.
	MemberClusterNameLabel = fleetPrefix + "member-name"

	// FleetResourceLabelKey marks namespaces and objects owned by the fleet.
	FleetResourceLabelKey = fleetPrefix + "is-fleet-resource"

	// NamespacePrefix prefixes the reserved hub namespace of each member.
	NamespacePrefix = "fleet-member-"
	// NamespaceNameFormat builds the reserved namespace from the member name.
	NamespaceNameFormat = NamespacePrefix + "%s"
	// RoleNameFormat names the Role granted to the member agent.
	RoleNameFormat = "fleet-role-%s"
	// RoleBindingNameFormat names the RoleBinding for the member agent.
	RoleBindingNameFormat = "fleet-rolebinding-%s"
	// FleetSystemNamespace is where fleet agents run.
	FleetSystemNamespace = "fleet-system"

	// CordonTaintKey / CordonTaintValue form the taint used to drain a cluster.
	CordonTaintKey   = "cordon-key"
	CordonTaintValue = "cordon-value"
)

// MemberCluster / InternalMemberCluster condition types.
const (
	// ConditionTypeMemberClusterReadyToJoin: the hub has set up everything
	// the member needs (namespace, RBAC, IMC).
	ConditionTypeMemberClusterReadyToJoin = "ReadyToJoin"
	// ConditionTypeMemberClusterJoined: all agents have joined.
	ConditionTypeMemberClusterJoined = "Joined"
	// ConditionTypeMemberClusterHealthy is kept for compatibility; unused.
	ConditionTypeMemberClusterHealthy = "Healthy"
	// ConditionTypeClusterPropertyProviderStarted reports the property provider start.
	ConditionTypeClusterPropertyProviderStarted = "ClusterPropertyProviderStarted"
	// ConditionTypeClusterPropertyCollectionSucceeded reports the last collection.
	ConditionTypeClusterPropertyCollectionSucceeded = "ClusterPropertyCollectionSucceeded"
	// ConditionTypeNamespaceCollectionSucceeded reports namespace collection.
	ConditionTypeNamespaceCollectionSucceeded = "NamespaceCollectionSucceeded"
)

// Agent condition types (AgentStatus.Conditions).
const (
	AgentJoined  = "Joined"
	AgentHealthy = "Healthy"
)

// Agent condition reasons (AgentStatus.Conditions of the member agent, as
// KubeFleet's member agent reports them).
const (
	ReasonInternalMemberClusterJoined    = "InternalMemberClusterJoined"
	ReasonInternalMemberClusterLeft      = "InternalMemberClusterLeft"
	ReasonInternalMemberClusterHealthy   = "InternalMemberClusterHealthy"
	ReasonInternalMemberClusterUnhealthy = "InternalMemberClusterUnhealthy"
)

// MemberCluster condition reasons.
const (
	ReasonMemberClusterReadyToJoin       = "MemberClusterReadyToJoin"
	ReasonMemberClusterNotReadyToJoin    = "MemberClusterNotReadyToJoin"
	ReasonMemberClusterJoined            = "MemberClusterJoined"
	ReasonMemberClusterLeft              = "MemberClusterLeft"
	ReasonMemberClusterJoinStateUnknown  = "MemberClusterJoinStateUnknown"
	ReasonPropertyProviderStarted        = "Started"
	ReasonPropertyProviderFailedToStart  = "FailedToStart"
	ReasonPropertyCollectionTimedOut     = "TimedOut"
	ReasonPropertyCollectionTooManyCalls = "TooManyCalls"
	ReasonPropertiesCollected            = "PropertiesCollected"
	ReasonNamespaceCollectionSucceeded   = "Succeeded"
	ReasonNamespaceCollectionDegraded    = "Degraded"

	// ClusterProfile health reasons.
	ReasonMemberAgentReportedNoStatus     = "MemberAgentReportedNoStatus"
	ReasonMemberAgentHeartbeatLost        = "MemberAgentHeartbeatLost"
	ReasonMemberAgentReportedNoHealthInfo = "MemberAgentReportedNoHealthInfo"
	ReasonMemberClusterAPIServerUnhealthy = "MemberClusterAPIServerUnhealthy"
	ReasonMemberClusterAPIServerHealthy   = "MemberClusterAPIServerHealthy"
)

// Event reasons recorded on MemberClusters.
const (
	// EventReasonLeaving: the hub asked the member's syncer to leave.
	EventReasonLeaving = "Leaving"
	// EventReasonForceLeave: the syncer did not confirm in time; the hub
	// removes its state for the member anyway.
	EventReasonForceLeave = "ForceLeave"
	// EventReasonNamespaceCreated: the member's Work namespace on the hub.
	EventReasonNamespaceCreated = "NamespaceCreated"
)

// Well-known cluster property names. Numeric values use resource.Quantity
// syntax.
const (
	// NodeCountProperty is the number of nodes in the cluster.
	NodeCountProperty PropertyName = "kubernetes-fleet.io/node-count"
	// K8sVersionProperty is the Kubernetes version of the cluster.
	K8sVersionProperty PropertyName = "k8s.io/k8s-version"
	// ClusterEntryPointProperty is the API server URL of the cluster.
	ClusterEntryPointProperty PropertyName = "k8s.io/cluster-entrypoint"
	// ClusterCertificateAuthorityProperty is the cluster CA bundle.
	ClusterCertificateAuthorityProperty PropertyName = "k8s.io/cluster-certificate-authority-data"

	// ResourcePropertyNamePrefix prefixes resource properties, which are
	// named <prefix><capacity type>-<resource name>, e.g.
	// resources.kubernetes-fleet.io/available-cpu.
	ResourcePropertyNamePrefix = "resources.kubernetes-fleet.io/"
	// Capacity types used in resource property names.
	TotalCapacityName       = "total"
	AllocatableCapacityName = "allocatable"
	AvailableCapacityName   = "available"

	TotalCPUCapacityProperty          PropertyName = ResourcePropertyNamePrefix + "total-cpu"
	TotalMemoryCapacityProperty       PropertyName = ResourcePropertyNamePrefix + "total-memory"
	AllocatableCPUCapacityProperty    PropertyName = ResourcePropertyNamePrefix + "allocatable-cpu"
	AllocatableMemoryCapacityProperty PropertyName = ResourcePropertyNamePrefix + "allocatable-memory"
	AvailableCPUCapacityProperty      PropertyName = ResourcePropertyNamePrefix + "available-cpu"
	AvailableMemoryCapacityProperty   PropertyName = ResourcePropertyNamePrefix + "available-memory"

	// Properties published by the Azure property provider; listed because
	// user manifests refer to them.
	PerCPUCoreCostProperty    PropertyName = "kubernetes.azure.com/per-cpu-core-cost"
	PerGBMemoryCostProperty   PropertyName = "kubernetes.azure.com/per-gb-memory-cost"
	VMSizeCountPropertyFormat              = "kubernetes.azure.com/vm-sizes/%s/count"
)
