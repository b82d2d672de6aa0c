package v1beta1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PlacementObj is implemented by ClusterResourcePlacement and
// ResourcePlacement so that controllers can handle both the same way.
// +kubebuilder:object:generate=false
type PlacementObj interface {
	metav1.Object
	runtime.Object
	GetPlacementSpec() *PlacementSpec
	SetPlacementSpec(PlacementSpec)
	GetPlacementStatus() *PlacementStatus
	SetPlacementStatus(PlacementStatus)
}

// PlacementListObj is implemented by the placement list types.
// +kubebuilder:object:generate=false
type PlacementListObj interface {
	metav1.ListInterface
	runtime.Object
	GetPlacementObjs() []PlacementObj
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=crp
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.generation`,name="Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.policy.placementType`,name="Type",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].status`,name="Scheduled",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].observedGeneration`,name="Scheduled-Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementWorkSynchronized")].status`,name="Work-Synchronized",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementWorkSynchronized")].observedGeneration`,name="Work-Synchronized-Gen",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].status`,name="Available",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].observedGeneration`,name="Available-Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date
// NamespaceAccessible copies the status into the one selected namespace, so
// exactly one Namespace must be selected; the copy's location cannot move,
// hence the immutability ("" is treated as the default ClusterScopeOnly).
// +kubebuilder:validation:XValidation:rule="!has(self.spec.statusReportingScope) || self.spec.statusReportingScope != 'NamespaceAccessible' || size(self.spec.resourceSelectors.filter(s, s.kind == 'Namespace')) == 1",message="statusReportingScope NamespaceAccessible requires exactly one resourceSelector with kind Namespace; select a single namespace or use ClusterScopeOnly",fieldPath=".spec.resourceSelectors"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.spec.statusReportingScope) && oldSelf.spec.statusReportingScope == 'NamespaceAccessible') == (has(self.spec.statusReportingScope) && self.spec.statusReportingScope == 'NamespaceAccessible')",message="statusReportingScope is immutable; delete and recreate the placement to change it",fieldPath=".spec.statusReportingScope"

// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) < 64",optionalOldSelf=true,message="metadata.name must be at most 63 characters long: the name is used in label values"
// ClusterResourcePlacement selects cluster-scoped resources (and whole
// namespaces) on the hub and places them onto member clusters.
type ClusterResourcePlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PlacementSpec `json:"spec"`

	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementList is a list of ClusterResourcePlacements.
type ClusterResourcePlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacement `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=rp
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.generation`,name="Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.policy.placementType`,name="Type",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ResourcePlacementScheduled")].status`,name="Scheduled",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ResourcePlacementScheduled")].observedGeneration`,name="Scheduled-Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ResourcePlacementWorkSynchronized")].status`,name="Work-Synchronized",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ResourcePlacementWorkSynchronized")].observedGeneration`,name="Work-Synchronized-Gen",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ResourcePlacementAvailable")].status`,name="Available",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="ResourcePlacementAvailable")].observedGeneration`,name="Available-Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) < 64",optionalOldSelf=true,message="metadata.name must be at most 63 characters long: the name is used in label values"
// ResourcePlacement selects namespaced resources in its own namespace and
// places them onto member clusters.
type ResourcePlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PlacementSpec `json:"spec"`

	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourcePlacementList is a list of ResourcePlacements.
type ResourcePlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourcePlacement `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=crps
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.sourceStatus.observedResourceIndex`,name="Resource-Index",type=string
// +kubebuilder:printcolumn:JSONPath=`.lastUpdatedTime`,name="Last-Updated",type=date
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterResourcePlacementStatus is a namespaced, read-only copy of a CRP's
// status, written into the selected namespace when the CRP uses
// statusReportingScope NamespaceAccessible so namespace users can see it.
// Its name equals the CRP name.
type ClusterResourcePlacementStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// PlacementStatus is the copied CRP status.
	// +optional
	PlacementStatus PlacementStatus `json:"sourceStatus,omitempty"`

	// LastUpdatedTime is when the copy was last refreshed.
	// +required
	LastUpdatedTime metav1.Time `json:"lastUpdatedTime"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementStatusList is a list of ClusterResourcePlacementStatuses.
type ClusterResourcePlacementStatusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacementStatus `json:"items"`
}

// PlacementSpec is shared by ClusterResourcePlacement and ResourcePlacement.
// An unset policy means PickAll, so a policy added later may only be PickAll;
// the placement type itself is immutable (see PlacementPolicy).
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.policy) || has(self.policy)",message="policy cannot be removed once set",fieldPath=".policy"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.policy) || !has(self.policy) || !has(self.policy.placementType) || self.policy.placementType == 'PickAll'",message="placementType is immutable: the placement was created without a policy (PickAll), so a policy added later must use placementType PickAll",fieldPath=".policy.placementType"
type PlacementSpec struct {
	// ResourceSelectors pick the resources to place; they are ORed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="size(self.filter(s, s.kind == 'Namespace' && has(s.selectionScope) && s.selectionScope == 'NamespaceWithResourceSelectors')) <= 1",message="at most one Namespace resourceSelector may use selectionScope NamespaceWithResourceSelectors"
	// +kubebuilder:validation:XValidation:rule="self.all(s, !(s.kind == 'Namespace' && has(s.selectionScope) && s.selectionScope == 'NamespaceWithResourceSelectors') || (has(s.name) && size(s.name) > 0 && !has(s.labelSelector)))",message="a Namespace resourceSelector with selectionScope NamespaceWithResourceSelectors must select the namespace by a non-empty name, not by labelSelector"
	// +kubebuilder:validation:XValidation:rule="!self.exists(s, s.kind == 'Namespace' && has(s.selectionScope) && s.selectionScope == 'NamespaceWithResourceSelectors') || size(self.filter(s, s.kind == 'Namespace')) == 1",message="when a Namespace resourceSelector uses selectionScope NamespaceWithResourceSelectors it must be the only Namespace resourceSelector"
	// +required
	ResourceSelectors []ResourceSelectorTerm `json:"resourceSelectors"`

	// Policy decides which clusters the resources go to. Nil means all
	// joined clusters (PickAll).
	// The rules reject fields that make no sense for the placement type,
	// and the last one makes tolerations append-only so that an edit does
	// not evict already placed workloads.
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickFixed' || !has(self.affinity)",message="affinity cannot be set when placementType is PickFixed; list the clusters in clusterNames instead"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickFixed' || !has(self.numberOfClusters)",message="numberOfClusters cannot be set when placementType is PickFixed; the number of clusterNames is used"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickFixed' || !has(self.topologySpreadConstraints) || size(self.topologySpreadConstraints) == 0",message="topologySpreadConstraints cannot be set when placementType is PickFixed"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickFixed' || !has(self.tolerations) || size(self.tolerations) == 0",message="tolerations cannot be set when placementType is PickFixed"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickAll' || !has(self.clusterNames) || size(self.clusterNames) == 0",message="clusterNames cannot be set when placementType is PickAll; use PickFixed to name clusters"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickAll' || !has(self.numberOfClusters)",message="numberOfClusters cannot be set when placementType is PickAll; use PickN to pick a number of clusters"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickAll' || !has(self.topologySpreadConstraints) || size(self.topologySpreadConstraints) == 0",message="topologySpreadConstraints cannot be set when placementType is PickAll; they are only supported with PickN"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickN' || !has(self.clusterNames) || size(self.clusterNames) == 0",message="clusterNames cannot be set when placementType is PickN; use PickFixed to name clusters"
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickN' || has(self.numberOfClusters)",message="numberOfClusters is required when placementType is PickN"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.tolerations) || oldSelf.tolerations.all(o, has(self.tolerations) && self.tolerations.exists(n, n == o))",message="tolerations can be added but existing ones cannot be changed or removed",fieldPath=".tolerations"
	// +optional
	Policy *PlacementPolicy `json:"policy,omitempty"`

	// Strategy controls how changes are rolled out to the selected clusters.
	// An omitted strategy defaults to a RollingUpdate with default settings.
	// +kubebuilder:default={type: RollingUpdate, rollingUpdate: {}}
	// +patchStrategy=retainKeys
	// +optional
	Strategy RolloutStrategy `json:"strategy,omitempty" patchStrategy:"retainKeys"`

	// RevisionHistoryLimit is how many old policy and resource snapshots are
	// kept.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// StatusReportingScope controls where the placement status is visible.
	// "" is accepted and means ClusterScopeOnly.
	// +kubebuilder:default=ClusterScopeOnly
	// +kubebuilder:validation:Enum=ClusterScopeOnly;NamespaceAccessible;""
	// +optional
	StatusReportingScope StatusReportingScope `json:"statusReportingScope,omitempty"`
}

// StatusReportingScope selects where the status of a placement is reported.
type StatusReportingScope string

const (
	// ClusterScopeOnly keeps the status on the placement only.
	ClusterScopeOnly StatusReportingScope = "ClusterScopeOnly"
	// NamespaceAccessible additionally copies a CRP's status into a
	// ClusterResourcePlacementStatus in the selected namespace.
	NamespaceAccessible StatusReportingScope = "NamespaceAccessible"
)

// SelectionScope says what a Namespace selector selects.
type SelectionScope string

const (
	// NamespaceOnly selects the namespace object only.
	NamespaceOnly SelectionScope = "NamespaceOnly"
	// NamespaceWithResources selects the namespace and everything in it.
	NamespaceWithResources SelectionScope = "NamespaceWithResources"
	// NamespaceWithResourceSelectors selects the namespace plus whatever the
	// other selectors pick inside it (and cluster-scoped objects).
	NamespaceWithResourceSelectors SelectionScope = "NamespaceWithResourceSelectors"
)

// ResourceSelectorTerm selects resources by GVK and either name or labels.
// +kubebuilder:validation:XValidation:rule="!(has(self.name) && size(self.name) > 0 && has(self.labelSelector))",message="name and labelSelector are mutually exclusive; select a resource either by name or by labelSelector"
type ResourceSelectorTerm struct {
	// Group of the resource; "" is the core group.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Group string `json:"group"`

	// Version of the resource.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Version string `json:"version"`

	// Kind of the resource.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`

	// Name selects one resource by name.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// LabelSelector selects resources by labels; an empty selector selects
	// all resources of the GVK.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// SelectionScope only applies to Namespace selectors. "" is accepted and
	// means NamespaceWithResources.
	// +kubebuilder:default=NamespaceWithResources
	// +kubebuilder:validation:Enum=NamespaceOnly;NamespaceWithResources;NamespaceWithResourceSelectors;""
	// +optional
	SelectionScope SelectionScope `json:"selectionScope,omitempty"`
}

// PlacementType is the cluster selection mode.
// +kubebuilder:validation:Enum=PickAll;PickN;PickFixed
type PlacementType string

const (
	// PickAllPlacementType selects every cluster that matches the affinity.
	PickAllPlacementType PlacementType = "PickAll"
	// PickNPlacementType selects numberOfClusters clusters.
	PickNPlacementType PlacementType = "PickN"
	// PickFixedPlacementType selects the clusters named in clusterNames.
	PickFixedPlacementType PlacementType = "PickFixed"
)

// PlacementPolicy decides which clusters a placement targets. Its
// consistency rules live on PlacementSpec.Policy rather than on this type:
// policy snapshots store a copy with numberOfClusters stripped (the count is
// kept in an annotation) and must not be rejected for that.
type PlacementPolicy struct {
	// PlacementType is PickAll (default), PickN or PickFixed; immutable.
	// +kubebuilder:default=PickAll
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="placementType is immutable; create a new placement to change it"
	// +optional
	PlacementType PlacementType `json:"placementType,omitempty"`

	// ClusterNames lists the target clusters for PickFixed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// NumberOfClusters is the number of clusters to pick for PickN.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty"`

	// Affinity restricts and ranks the candidate clusters.
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints spread PickN placements across cluster
	// topology domains.
	// +optional
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// Tolerations let the placement use tainted clusters. They can only be
	// added to, never changed or removed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// Affinity groups the cluster affinity rules.
type Affinity struct {
	// ClusterAffinity selects and ranks clusters by labels and properties.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
}

// ClusterAffinity holds the required and preferred cluster terms.
type ClusterAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution filters clusters; it is
	// only evaluated at scheduling time.
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution *ClusterSelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// PreferredDuringSchedulingIgnoredDuringExecution ranks clusters (PickN);
	// ignored for PickAll.
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredClusterSelector `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// ClusterSelector is a set of ORed cluster selector terms. A sorter ranks
// rather than filters, so it is rejected here.
// +kubebuilder:validation:XValidation:rule="!has(self.clusterSelectorTerms) || self.clusterSelectorTerms.all(t, !has(t.propertySorter))",message="propertySorter can only be used in preferredDuringSchedulingIgnoredDuringExecution terms; use propertySelector to filter clusters"
type ClusterSelector struct {
	// ClusterSelectorTerms are ORed.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ClusterSelectorTerms []ClusterSelectorTerm `json:"clusterSelectorTerms,omitempty"`
}

// PreferredClusterSelector is a weighted preference. A property selector
// filters rather than ranks, so it is rejected here.
// +kubebuilder:validation:XValidation:rule="!has(self.preference.propertySelector)",message="propertySelector can only be used in requiredDuringSchedulingIgnoredDuringExecution terms; use propertySorter to rank clusters by a property"
type PreferredClusterSelector struct {
	// Weight added to the score of matching clusters.
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// Preference is the term clusters are matched against.
	// +required
	Preference ClusterSelectorTerm `json:"preference"`
}

// ClusterSelectorTerm matches clusters; its parts are ANDed.
type ClusterSelectorTerm struct {
	// LabelSelector matches cluster labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// PropertySelector matches cluster properties (required terms only).
	// +optional
	PropertySelector *PropertySelector `json:"propertySelector,omitempty"`

	// PropertySorter ranks clusters by a property (preferred terms only).
	// +optional
	PropertySorter *PropertySorter `json:"propertySorter,omitempty"`
}

// PropertySelector is a set of ANDed property requirements.
type PropertySelector struct {
	// MatchExpressions are ANDed.
	// +required
	MatchExpressions []PropertySelectorRequirement `json:"matchExpressions"`
}

// PropertySelectorOperator compares a property with a value.
// +kubebuilder:validation:Enum=Gt;Ge;Eq;Ne;Lt;Le
type PropertySelectorOperator string

const (
	PropertySelectorGreaterThan          PropertySelectorOperator = "Gt"
	PropertySelectorGreaterThanOrEqualTo PropertySelectorOperator = "Ge"
	PropertySelectorEqualTo              PropertySelectorOperator = "Eq"
	PropertySelectorNotEqualTo           PropertySelectorOperator = "Ne"
	PropertySelectorLessThan             PropertySelectorOperator = "Lt"
	PropertySelectorLessThanOrEqualTo    PropertySelectorOperator = "Le"
)

// PropertySelectorRequirement compares one cluster property with a value.
type PropertySelectorRequirement struct {
	// Name of the property, e.g. kubernetes-fleet.io/node-count or
	// resources.kubernetes-fleet.io/available-cpu.
	// +required
	Name string `json:"name"`

	// Operator is Gt, Ge, Eq, Ne, Lt or Le.
	// +required
	Operator PropertySelectorOperator `json:"operator"`

	// Values holds exactly one value in resource.Quantity syntax.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]{1,3}))?$`
	// +required
	Values []string `json:"values"`
}

// PropertySortOrder is the ranking direction of a property sorter.
// +kubebuilder:validation:Enum=Ascending;Descending
type PropertySortOrder string

const (
	// Descending favours clusters with larger values.
	Descending PropertySortOrder = "Descending"
	// Ascending favours clusters with smaller values.
	Ascending PropertySortOrder = "Ascending"
)

// PropertySorter scales a preference weight linearly by where a cluster's
// property value falls between the observed minimum and maximum.
type PropertySorter struct {
	// Name of the property.
	// +required
	Name string `json:"name"`

	// SortOrder is Ascending or Descending.
	// +required
	SortOrder PropertySortOrder `json:"sortOrder"`
}

// UnsatisfiableConstraintAction says what to do when a spread constraint
// cannot be met.
// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
type UnsatisfiableConstraintAction string

const (
	// DoNotSchedule treats the constraint as a filter.
	DoNotSchedule UnsatisfiableConstraintAction = "DoNotSchedule"
	// ScheduleAnyway treats the constraint as a score.
	ScheduleAnyway UnsatisfiableConstraintAction = "ScheduleAnyway"
)

// TopologySpreadConstraint spreads clusters across the values of a cluster
// label.
type TopologySpreadConstraint struct {
	// MaxSkew is the largest allowed difference in cluster count between
	// two topology domains.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxSkew *int32 `json:"maxSkew,omitempty"`

	// TopologyKey is the cluster label whose values form the domains.
	// +kubebuilder:validation:MaxLength=317
	// +required
	TopologyKey string `json:"topologyKey"`

	// WhenUnsatisfiable is DoNotSchedule (default) or ScheduleAnyway.
	// +kubebuilder:default=DoNotSchedule
	// +optional
	WhenUnsatisfiable UnsatisfiableConstraintAction `json:"whenUnsatisfiable,omitempty"`
}

// Toleration lets a placement use clusters with a matching taint.
// +kubebuilder:validation:XValidation:rule="self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="toleration value must be empty when operator is Exists"
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || self.operator == 'Exists'",message="toleration operator must be Exists when key is empty (an empty key with Exists tolerates every taint)"
type Toleration struct {
	// Key is the taint key; empty matches all keys (operator Exists only).
	// +kubebuilder:validation:MaxLength=317
	// +optional
	Key string `json:"key,omitempty"`

	// Operator is Equal (default) or Exists.
	// +kubebuilder:default=Equal
	// +kubebuilder:validation:Enum=Equal;Exists
	// +optional
	Operator corev1.TolerationOperator `json:"operator,omitempty"`

	// Value is the taint value to match for operator Equal.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect to match; empty matches all effects. Only NoSchedule exists.
	// +kubebuilder:validation:Enum=NoSchedule
	// +optional
	Effect corev1.TaintEffect `json:"effect,omitempty"`
}

// RolloutStrategyType is the rollout mode.
// +kubebuilder:validation:Enum=RollingUpdate;External
type RolloutStrategyType string

const (
	// RollingUpdateRolloutStrategyType rolls out under the fleet's control.
	RollingUpdateRolloutStrategyType RolloutStrategyType = "RollingUpdate"
	// ExternalRolloutStrategyType leaves the rollout to an external driver,
	// e.g. a (Cluster)StagedUpdateRun.
	ExternalRolloutStrategyType RolloutStrategyType = "External"
)

// RolloutStrategy controls how changes reach the clusters.
// Once an external controller owns the rollout the placement cannot take it
// back, since that controller may be mid-flight.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'External' || !has(self.rollingUpdate)",message="rollingUpdate cannot be set when strategy type is External; remove spec.strategy.rollingUpdate"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.type) || oldSelf.type != 'External' || (has(self.type) && self.type == 'External')",message="strategy type cannot be changed from External to another type"
type RolloutStrategy struct {
	// Type is RollingUpdate (default) or External.
	// +kubebuilder:default=RollingUpdate
	// +optional
	Type RolloutStrategyType `json:"type,omitempty"`

	// RollingUpdate tunes the RollingUpdate strategy. The schema can only
	// default it when the whole strategy is omitted (External forbids it), so
	// controllers must treat nil as maxUnavailable/maxSurge 25% and
	// unavailablePeriodSeconds 60.
	// +optional
	RollingUpdate *RollingUpdateConfig `json:"rollingUpdate,omitempty"`

	// ApplyStrategy says how resources are applied on member clusters.
	// +kubebuilder:default={}
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// DeleteStrategy says what happens to placed resources when the
	// placement is deleted.
	// +optional
	DeleteStrategy *DeleteStrategy `json:"deleteStrategy,omitempty"`

	// ReportBackStrategy controls reporting member-side status back to the
	// hub (experimental).
	// +optional
	ReportBackStrategy *ReportBackStrategy `json:"reportBackStrategy,omitempty"`
}

// RollingUpdateConfig tunes a rolling update. Percentages are of the target
// cluster count and are rounded up.
type RollingUpdateConfig struct {
	// MaxUnavailable is how many target clusters may be unavailable during
	// the rollout.
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="maxUnavailable must be a non-negative integer or a percentage"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many clusters above the target count may receive the
	// resources during the rollout. It should not be 0 when maxUnavailable
	// is 0.
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="maxSurge must be a non-negative integer or a percentage"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// UnavailablePeriodSeconds is how long to wait before treating resources
	// whose availability cannot be tracked as available.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	// +optional
	UnavailablePeriodSeconds *int `json:"unavailablePeriodSeconds,omitempty"`
}

// ApplyStrategyType is how manifests are applied.
// +kubebuilder:validation:Enum=ClientSideApply;ServerSideApply;ReportDiff
type ApplyStrategyType string

const (
	// ApplyStrategyTypeClientSideApply uses a three-way merge.
	ApplyStrategyTypeClientSideApply ApplyStrategyType = "ClientSideApply"
	// ApplyStrategyTypeServerSideApply uses server-side apply.
	ApplyStrategyTypeServerSideApply ApplyStrategyType = "ServerSideApply"
	// ApplyStrategyTypeReportDiff never writes; it only reports differences.
	ApplyStrategyTypeReportDiff ApplyStrategyType = "ReportDiff"
)

// ComparisonOptionType selects which fields are compared for drift/diff.
// +kubebuilder:validation:Enum=PartialComparison;FullComparison
type ComparisonOptionType string

const (
	// ComparisonOptionTypePartialComparison compares hub-specified fields only.
	ComparisonOptionTypePartialComparison ComparisonOptionType = "PartialComparison"
	// ComparisonOptionTypeFullComparison compares all fields.
	ComparisonOptionTypeFullComparison ComparisonOptionType = "FullComparison"
)

// WhenToApplyType says when the hub's manifest is (re)applied.
// +kubebuilder:validation:Enum=Always;IfNotDrifted
type WhenToApplyType string

const (
	// WhenToApplyTypeAlways always applies, overwriting drifts.
	WhenToApplyTypeAlways WhenToApplyType = "Always"
	// WhenToApplyTypeIfNotDrifted stops applying once a drift is found.
	WhenToApplyTypeIfNotDrifted WhenToApplyType = "IfNotDrifted"
)

// WhenToTakeOverType says when pre-existing member objects are taken over.
// +kubebuilder:validation:Enum=Always;IfNoDiff;Never
type WhenToTakeOverType string

const (
	WhenToTakeOverTypeAlways   WhenToTakeOverType = "Always"
	WhenToTakeOverTypeIfNoDiff WhenToTakeOverType = "IfNoDiff"
	WhenToTakeOverTypeNever    WhenToTakeOverType = "Never"
)

// ApplyStrategy says how and when resources are applied on member clusters.
// It is copied onto bindings, Works and update runs.
// +kubebuilder:validation:XValidation:rule="!has(self.serverSideApplyConfig) || self.type == 'ServerSideApply'",message="serverSideApplyConfig can only be set when applyStrategy type is ServerSideApply"
type ApplyStrategy struct {
	// ComparisonOption is PartialComparison (default) or FullComparison.
	// +kubebuilder:default=PartialComparison
	// +optional
	ComparisonOption ComparisonOptionType `json:"comparisonOption,omitempty"`

	// WhenToApply is Always (default) or IfNotDrifted.
	// +kubebuilder:default=Always
	// +optional
	WhenToApply WhenToApplyType `json:"whenToApply,omitempty"`

	// Type is ClientSideApply (default), ServerSideApply or ReportDiff.
	// +kubebuilder:default=ClientSideApply
	// +optional
	Type ApplyStrategyType `json:"type,omitempty"`

	// AllowCoOwnership allows applying to objects also owned by non-fleet
	// owners.
	// +kubebuilder:default=false
	// +optional
	AllowCoOwnership bool `json:"allowCoOwnership,omitempty"`

	// ServerSideApplyConfig tunes server-side apply.
	// +optional
	ServerSideApplyConfig *ServerSideApplyConfig `json:"serverSideApplyConfig,omitempty"`

	// WhenToTakeOver is Always (default), IfNoDiff or Never.
	// +kubebuilder:default=Always
	// +optional
	WhenToTakeOver WhenToTakeOverType `json:"whenToTakeOver,omitempty"`
}

// ServerSideApplyConfig tunes server-side apply.
type ServerSideApplyConfig struct {
	// ForceConflicts takes over conflicting fields from other managers.
	// +kubebuilder:default=false
	// +optional
	ForceConflicts bool `json:"force"`
}

// DeletePropagationPolicy says what happens to placed resources on delete.
// +kubebuilder:validation:Enum=Delete;Abandon
type DeletePropagationPolicy string

const (
	// DeletePropagationPolicyDelete removes placed resources.
	DeletePropagationPolicyDelete DeletePropagationPolicy = "Delete"
	// DeletePropagationPolicyAbandon leaves them in the member clusters.
	DeletePropagationPolicyAbandon DeletePropagationPolicy = "Abandon"
)

// DeleteStrategy configures placement deletion.
type DeleteStrategy struct {
	// PropagationPolicy is Delete (default) or Abandon.
	// +kubebuilder:default=Delete
	// +optional
	PropagationPolicy DeletePropagationPolicy `json:"propagationPolicy,omitempty"`
}

// ReportBackStrategyType selects whether status is reported back.
// +kubebuilder:validation:Enum=Disabled;Mirror
type ReportBackStrategyType string

const (
	ReportBackStrategyTypeDisabled ReportBackStrategyType = "Disabled"
	ReportBackStrategyTypeMirror   ReportBackStrategyType = "Mirror"
)

// ReportBackDestination is where mirrored status is written.
// +kubebuilder:validation:Enum=OriginalResource;WorkAPI
type ReportBackDestination string

const (
	ReportBackDestinationOriginalResource ReportBackDestination = "OriginalResource"
	ReportBackDestinationWorkAPI          ReportBackDestination = "WorkAPI"
)

// ReportBackStrategy controls reporting member-side status back to the hub.
// +kubebuilder:validation:XValidation:rule="self.type != 'Mirror' || has(self.destination)",message="destination is required when reportBackStrategy type is Mirror"
type ReportBackStrategy struct {
	// Type is Disabled (default) or Mirror.
	// +kubebuilder:default=Disabled
	// +required
	Type ReportBackStrategyType `json:"type"`

	// Destination is OriginalResource or WorkAPI; required for Mirror.
	// +optional
	Destination *ReportBackDestination `json:"destination,omitempty"`
}

// MirrorDestination is where the strategy mirrors member statuses to;
// empty when it mirrors none.
func (s *ReportBackStrategy) MirrorDestination() ReportBackDestination {
	if s == nil || s.Type != ReportBackStrategyTypeMirror || s.Destination == nil {
		return ""
	}
	return *s.Destination
}

// PlacementStatus is the observed state of a placement.
type PlacementStatus struct {
	// SelectedResources lists the resources the placement selected.
	// +optional
	SelectedResources []ResourceIdentifier `json:"selectedResources,omitempty"`

	// ObservedResourceIndex is the resource snapshot index being placed.
	// With an External strategy it is only set when all clusters agree.
	// +optional
	ObservedResourceIndex string `json:"observedResourceIndex,omitempty"`

	// PerClusterPlacementStatuses has one entry per target cluster (or per
	// unfilled slot for PickN/PickFixed, with an empty clusterName).
	// +optional
	PerClusterPlacementStatuses []PerClusterPlacementStatus `json:"placementStatuses,omitempty"`

	// Conditions of the placement.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EnvelopeType is the kind of envelope a resource was wrapped in.
// +kubebuilder:validation:Enum=ConfigMap;ClusterResourceEnvelope;ResourceEnvelope
type EnvelopeType string

const (
	// ConfigMapEnvelopeType is the legacy ConfigMap envelope.
	ConfigMapEnvelopeType EnvelopeType = "ConfigMap"
	// ClusterResourceEnvelopeType is a ClusterResourceEnvelope.
	ClusterResourceEnvelopeType EnvelopeType = "ClusterResourceEnvelope"
	// ResourceEnvelopeType is a ResourceEnvelope.
	ResourceEnvelopeType EnvelopeType = "ResourceEnvelope"
)

// EnvelopeIdentifier identifies the envelope a resource came from.
type EnvelopeIdentifier struct {
	// Name of the envelope.
	// +required
	Name string `json:"name"`

	// Namespace of the envelope (empty for cluster-scoped envelopes).
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Type of the envelope.
	// +kubebuilder:default=ConfigMap
	// +optional
	Type EnvelopeType `json:"type,omitempty"`
}

// ResourceIdentifier identifies a placed resource.
type ResourceIdentifier struct {
	// Group of the resource.
	// +optional
	Group string `json:"group,omitempty"`

	// Version of the resource.
	// +optional
	Version string `json:"version,omitempty"`

	// Kind of the resource.
	// +required
	Kind string `json:"kind"`

	// Name of the resource.
	// +required
	Name string `json:"name"`

	// Namespace of the resource; empty if cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Envelope is set when the resource was wrapped in an envelope.
	// +optional
	Envelope *EnvelopeIdentifier `json:"envelope,omitempty"`
}

// Describe names the resource for people: its kind, namespace/name, and
// the envelope it came in.
func (id ResourceIdentifier) Describe() string {
	name := id.Kind + " " + id.Name
	if id.Namespace != "" {
		name = fmt.Sprintf("%s %s/%s", id.Kind, id.Namespace, id.Name)
	}
	if id.Envelope != nil {
		name += fmt.Sprintf(" (in %s %s)", id.Envelope.Type, id.Envelope.Name)
	}
	return name
}

// NamespacedName references a namespaced object.
type NamespacedName struct {
	// Name of the object.
	// +required
	Name string `json:"name"`

	// Namespace of the object.
	// +required
	Namespace string `json:"namespace"`
}

// PerClusterPlacementStatus is the placement status on one cluster.
type PerClusterPlacementStatus struct {
	// ClusterName is the target cluster; empty for an unfilled slot.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// ObservedResourceIndex is the resource snapshot index placed on the
	// cluster.
	// +optional
	ObservedResourceIndex string `json:"observedResourceIndex,omitempty"`

	// ApplicableResourceOverrides are the ResourceOverride snapshots applied.
	// +optional
	ApplicableResourceOverrides []NamespacedName `json:"applicableResourceOverrides,omitempty"`

	// ApplicableClusterResourceOverrides are the ClusterResourceOverride
	// snapshots applied.
	// +optional
	ApplicableClusterResourceOverrides []string `json:"applicableClusterResourceOverrides,omitempty"`

	// FailedPlacements lists resources that failed to apply or become
	// available (capped to bound the object size).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailedPlacements []FailedResourcePlacement `json:"failedPlacements,omitempty"`

	// DriftedPlacements lists resources that drifted on the cluster.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DriftedPlacements []DriftedResourcePlacement `json:"driftedPlacements,omitempty"`

	// DiffedPlacements lists resources that differ from the hub (ReportDiff
	// or blocked takeover).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DiffedPlacements []DiffedResourcePlacement `json:"diffedPlacements,omitempty"`

	// Conditions on this cluster.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FailedResourcePlacement is a resource that failed on a cluster.
type FailedResourcePlacement struct {
	ResourceIdentifier `json:",inline"`

	// Condition is the failed condition.
	// +required
	Condition metav1.Condition `json:"condition"`
}

// PatchDetail is one difference between hub and member, as a JSON pointer
// and the two values.
type PatchDetail struct {
	// Path is a JSON pointer.
	// +required
	Path string `json:"path"`

	// ValueInMember is the value in the member cluster.
	// +optional
	ValueInMember string `json:"valueInMember,omitempty"`

	// ValueInHub is the value on the hub.
	// +optional
	ValueInHub string `json:"valueInHub,omitempty"`
}

// DriftedResourcePlacement is a resource that drifted on a cluster.
type DriftedResourcePlacement struct {
	ResourceIdentifier `json:",inline"`

	// ObservationTime is when the drift was last observed.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// TargetClusterObservedGeneration is the member object's generation.
	// +required
	TargetClusterObservedGeneration int64 `json:"targetClusterObservedGeneration"`

	// FirstDriftedObservedTime is when the drift was first observed.
	// +required
	FirstDriftedObservedTime metav1.Time `json:"firstDriftedObservedTime"`

	// ObservedDrifts are the drifted fields.
	// +optional
	ObservedDrifts []PatchDetail `json:"observedDrifts,omitempty"`
}

// DiffedResourcePlacement is a resource whose member copy differs from the hub.
type DiffedResourcePlacement struct {
	ResourceIdentifier `json:",inline"`

	// ObservationTime is when the diff was last observed.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// TargetClusterObservedGeneration is the member object's generation;
	// nil when the object does not exist there.
	// +optional
	TargetClusterObservedGeneration *int64 `json:"targetClusterObservedGeneration,omitempty"`

	// FirstDiffedObservedTime is when the diff was first observed.
	// +required
	FirstDiffedObservedTime metav1.Time `json:"firstDiffedObservedTime"`

	// ObservedDiffs are the differing fields.
	// +optional
	ObservedDiffs []PatchDetail `json:"observedDiffs,omitempty"`
}

// GetPlacementSpec returns the spec.
func (c *ClusterResourcePlacement) GetPlacementSpec() *PlacementSpec { return &c.Spec }

// SetPlacementSpec sets the spec.
func (c *ClusterResourcePlacement) SetPlacementSpec(s PlacementSpec) { c.Spec = s }

// GetPlacementStatus returns the status.
func (c *ClusterResourcePlacement) GetPlacementStatus() *PlacementStatus { return &c.Status }

// SetPlacementStatus sets the status.
func (c *ClusterResourcePlacement) SetPlacementStatus(s PlacementStatus) { c.Status = s }

// GetPlacementSpec returns the spec.
func (r *ResourcePlacement) GetPlacementSpec() *PlacementSpec { return &r.Spec }

// SetPlacementSpec sets the spec.
func (r *ResourcePlacement) SetPlacementSpec(s PlacementSpec) { r.Spec = s }

// GetPlacementStatus returns the status.
func (r *ResourcePlacement) GetPlacementStatus() *PlacementStatus { return &r.Status }

// SetPlacementStatus sets the status.
func (r *ResourcePlacement) SetPlacementStatus(s PlacementStatus) { r.Status = s }

// GetPlacementObjs returns the items as PlacementObjs.
func (l *ClusterResourcePlacementList) GetPlacementObjs() []PlacementObj {
	objs := make([]PlacementObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

// GetPlacementObjs returns the items as PlacementObjs.
func (l *ResourcePlacementList) GetPlacementObjs() []PlacementObj {
	objs := make([]PlacementObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

// GetTolerations returns the policy tolerations; safe on a nil policy.
func (p *PlacementPolicy) GetTolerations() []Toleration {
	if p == nil {
		return nil
	}
	return p.Tolerations
}

var (
	_ PlacementObj     = &ClusterResourcePlacement{}
	_ PlacementObj     = &ResourcePlacement{}
	_ PlacementListObj = &ClusterResourcePlacementList{}
	_ PlacementListObj = &ResourcePlacementList{}
)

func init() {
	SchemeBuilder.Register(
		&ClusterResourcePlacement{}, &ClusterResourcePlacementList{},
		&ResourcePlacement{}, &ResourcePlacementList{},
		&ClusterResourcePlacementStatus{}, &ClusterResourcePlacementStatusList{},
	)
}
