package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet},shortName=cg
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:JSONPath=`.spec.workspaces`,name="Workspaces",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.clusterCount`,name="Clusters",type=integer
// +kubebuilder:printcolumn:JSONPath=`.spec.podSecurity`,name="Pod-Security",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterGrant lets workspaces place onto the member clusters its selector
// picks. A workspace may use the union of the clusters of every grant that
// names it; a team workspace no grant names can use no cluster. The platform
// workspace root:fleet may always use every cluster.
type ClusterGrant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterGrantSpec `json:"spec"`

	// +optional
	Status ClusterGrantStatus `json:"status,omitempty"`
}

// ClusterGrantSpec says who may use which clusters.
type ClusterGrantSpec struct {
	// Workspaces are workspace paths, e.g. "root:teams:team-a". A path ending
	// in ":*" matches every workspace directly below it, e.g. "root:teams:*";
	// workspaces further down are covered only with childWorkspaces.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Pattern=`^root(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:\*)?$`
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=set
	Workspaces []string `json:"workspaces"`

	// ClusterSelector picks MemberClusters by label; empty picks all of them.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// TakeOverNamespaces lets the workspaces' placements adopt objects that
	// already exist on the granted clusters and that no placement created:
	// those in namespaces matching these patterns (path.Match syntax, e.g.
	// "legacy-*"; a Namespace matches by its own name). Adopted objects are
	// released, never deleted, when the placement lets go of them. By
	// default a team workspace adopts nothing: placing an object that
	// already exists reports NotTakenOver. (root:fleet follows each
	// placement's applyStrategy.whenToTakeOver, as KubeFleet does.)
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	TakeOverNamespaces []string `json:"takeOverNamespaces,omitempty"`

	// AllowCustomResourceDefinitions lets the workspaces place
	// CustomResourceDefinitions onto the granted clusters. A CRD is
	// cluster-wide and shared by every tenant of a member, so it is off by
	// default; Namespaces are the only other cluster-scoped kind a team
	// workspace may place.
	// +optional
	AllowCustomResourceDefinitions bool `json:"allowCustomResourceDefinitions,omitempty"`

	// PodSecurity is the Pod Security Standards level the workspaces'
	// namespaces get on the granted clusters, and that their workloads are
	// held to before they are written: privileged, baseline (the default:
	// no privileged containers, host namespaces, hostPath volumes or added
	// capabilities) or restricted. Below privileged, system-* priority
	// classes and Service externalIPs are refused too. Where several grants
	// cover a cluster, the loosest level holds. A team cannot loosen it
	// from its namespaces' labels; it may tighten it.
	// +kubebuilder:validation:Enum=privileged;baseline;restricted
	// +optional
	PodSecurity string `json:"podSecurity,omitempty"`

	// ChildWorkspaces lets the workspaces create workspaces below their own
	// and covers those with this grant, at any depth. A workspace the grant
	// names and everything below it are one owner on member clusters: the
	// team's namespaces are theirs together. Off by default: a team
	// workspace cannot create child workspaces (so that it cannot multiply
	// what it owns), and a grant covers only the workspaces it names
	// ("root:teams:*" covers root:teams:a, not root:teams:a:sub).
	// +optional
	ChildWorkspaces bool `json:"childWorkspaces,omitempty"`

	// Limits bound what each of the workspaces keeps on the hub, a team
	// and its child workspaces together. A limit left unset is the hub's
	// default (fleet-hub --team-limit-*). Where several grants set limits
	// for a team, those naming its workspace by path hold over those
	// naming it by a pattern, and among them the highest limit holds.
	// Writes by the team that would go over a limit are refused.
	// +optional
	Limits *TeamLimits `json:"limits,omitempty"`
}

// TeamLimits bound a team's share of the hub's storage.
type TeamLimits struct {
	// Objects is how many objects, of every kind, the team's workspaces may
	// hold, the hub's snapshots of its placements included.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Objects *int64 `json:"objects,omitempty"`

	// Storage is how many bytes the team's objects may take in the hub's
	// etcd, as stored there (compressed, when the hub compresses).
	// +optional
	Storage *resource.Quantity `json:"storage,omitempty"`

	// Placements is how many ClusterResourcePlacements and
	// ResourcePlacements the team may have.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Placements *int32 `json:"placements,omitempty"`

	// Overrides is how many ClusterResourceOverrides and ResourceOverrides
	// the team may have.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Overrides *int32 `json:"overrides,omitempty"`

	// SnapshotsKept is the highest revisionHistoryLimit a placement of the
	// team may set: how many old snapshots of each placement the hub keeps.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	SnapshotsKept *int32 `json:"snapshotsKept,omitempty"`
}

// ClusterGrantStatus shows what the grant currently covers.
type ClusterGrantStatus struct {
	// ClusterCount is the number of member clusters the selector picks.
	// +optional
	ClusterCount int32 `json:"clusterCount"`

	// Clusters are the names of those clusters (at most 1000 shown).
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Clusters []string `json:"clusters,omitempty"`

	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterGrantList is a list of ClusterGrants.
type ClusterGrantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterGrant `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterGrant{}, &ClusterGrantList{})
}

// ClusterGrant conditions: Valid tells whether the grant's cluster selector
// parses; while it does not, the grant covers no cluster.
const (
	ClusterGrantConditionValid  = "Valid"
	ClusterGrantSelectorValid   = "SelectorValid"
	ClusterGrantSelectorInvalid = "SelectorInvalid"
)
