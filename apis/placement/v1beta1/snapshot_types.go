package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ResourceSnapshotObj is implemented by ClusterResourceSnapshot and
// ResourceSnapshot.
// +kubebuilder:object:generate=false
type ResourceSnapshotObj interface {
	metav1.Object
	runtime.Object
	GetResourceSnapshotSpec() *ResourceSnapshotSpec
	SetResourceSnapshotSpec(ResourceSnapshotSpec)
	GetResourceSnapshotStatus() *ResourceSnapshotStatus
	SetResourceSnapshotStatus(ResourceSnapshotStatus)
}

// ResourceSnapshotListObj is implemented by the resource snapshot lists.
// +kubebuilder:object:generate=false
type ResourceSnapshotListObj interface {
	metav1.ListInterface
	runtime.Object
	GetResourceSnapshotObjs() []ResourceSnapshotObj
}

// PolicySnapshotObj is implemented by ClusterSchedulingPolicySnapshot and
// SchedulingPolicySnapshot.
// +kubebuilder:object:generate=false
type PolicySnapshotObj interface {
	metav1.Object
	runtime.Object
	GetPolicySnapshotSpec() *SchedulingPolicySnapshotSpec
	SetPolicySnapshotSpec(SchedulingPolicySnapshotSpec)
	GetPolicySnapshotStatus() *SchedulingPolicySnapshotStatus
	SetPolicySnapshotStatus(SchedulingPolicySnapshotStatus)
}

// PolicySnapshotListObj is implemented by the policy snapshot lists.
// +kubebuilder:object:generate=false
type PolicySnapshotListObj interface {
	metav1.ListInterface
	runtime.Object
	GetPolicySnapshotObjs() []PolicySnapshotObj
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=crs
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.generation`,name="Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterResourceSnapshot is an immutable copy of (part of) the resources a
// ClusterResourcePlacement selected. Large selections are split into a master
// snapshot ({placement}-{index}-snapshot) and shards ({placement}-{index}-{sub}).
type ClusterResourceSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceSnapshotSpec `json:"spec"`

	// +optional
	Status ResourceSnapshotStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceSnapshotList is a list of ClusterResourceSnapshots.
type ClusterResourceSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceSnapshot `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=rs
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.generation`,name="Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ResourceSnapshot is the namespaced twin of ClusterResourceSnapshot, owned
// by a ResourcePlacement.
type ResourceSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceSnapshotSpec `json:"spec"`

	// +optional
	Status ResourceSnapshotStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceSnapshotList is a list of ResourceSnapshots.
type ResourceSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceSnapshot `json:"items"`
}

// ResourceSnapshotSpec holds the sanitised selected objects.
type ResourceSnapshotSpec struct {
	// SelectedResources are the selected objects, stored verbatim.
	// +required
	SelectedResources []ResourceContent `json:"selectedResources"`
}

// ResourceContent is one arbitrary Kubernetes object. It is stored unpruned
// because the hub cannot know the schema of every selected kind.
type ResourceContent struct {
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// ResourceSnapshotStatus is the observed state of a resource snapshot.
type ResourceSnapshotStatus struct {
	// Conditions of the snapshot.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=csps
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.generation`,name="Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterSchedulingPolicySnapshot is an immutable copy of a CRP's policy
// ({placement}-{index}); the scheduler records its decisions in the status.
type ClusterSchedulingPolicySnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SchedulingPolicySnapshotSpec `json:"spec"`

	// +optional
	Status SchedulingPolicySnapshotStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterSchedulingPolicySnapshotList is a list of ClusterSchedulingPolicySnapshots.
type ClusterSchedulingPolicySnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterSchedulingPolicySnapshot `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=sps
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.generation`,name="Gen",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// SchedulingPolicySnapshot is the namespaced twin of
// ClusterSchedulingPolicySnapshot, owned by a ResourcePlacement.
type SchedulingPolicySnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SchedulingPolicySnapshotSpec `json:"spec"`

	// +optional
	Status SchedulingPolicySnapshotStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SchedulingPolicySnapshotList is a list of SchedulingPolicySnapshots.
type SchedulingPolicySnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SchedulingPolicySnapshot `json:"items"`
}

// SchedulingPolicySnapshotSpec is the snapshotted policy.
type SchedulingPolicySnapshotSpec struct {
	// Policy is a copy of the placement policy; nil means PickAll.
	// +optional
	Policy *PlacementPolicy `json:"policy,omitempty"`

	// PolicyHash is the sha256 of the policy, used to detect changes.
	// +required
	PolicyHash []byte `json:"policyHash"`
}

// SchedulingPolicySnapshotStatus carries the scheduling decisions.
type SchedulingPolicySnapshotStatus struct {
	// ObservedCRPGeneration is the placement generation the decisions were
	// made for.
	// +optional
	ObservedCRPGeneration int64 `json:"observedCRPGeneration,omitempty"`

	// Conditions of the snapshot (Scheduled).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ClusterDecisions are the scheduler's decisions, selected or not;
	// capped to bound the object size.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	ClusterDecisions []ClusterDecision `json:"targetClusters,omitempty"`
}

// ClusterDecision is the scheduler's decision for one cluster.
type ClusterDecision struct {
	// ClusterName is the cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Selected says whether the cluster was picked.
	// +required
	Selected bool `json:"selected"`

	// ClusterScore is the score the cluster got, if scored.
	// +optional
	ClusterScore *ClusterScore `json:"clusterScore,omitempty"`

	// Reason explains the decision.
	// +required
	Reason string `json:"reason"`
}

// ClusterScore is the scheduler's score for a cluster.
type ClusterScore struct {
	// AffinityScore is the sum of matching preferred affinity weights.
	// +optional
	AffinityScore *int32 `json:"affinityScore,omitempty"`

	// TopologySpreadScore is the topology spread score.
	// +optional
	TopologySpreadScore *int32 `json:"priorityScore,omitempty"`
}

// GetResourceSnapshotSpec returns the spec.
func (s *ClusterResourceSnapshot) GetResourceSnapshotSpec() *ResourceSnapshotSpec { return &s.Spec }

// SetResourceSnapshotSpec sets the spec.
func (s *ClusterResourceSnapshot) SetResourceSnapshotSpec(spec ResourceSnapshotSpec) { s.Spec = spec }

// GetResourceSnapshotStatus returns the status.
func (s *ClusterResourceSnapshot) GetResourceSnapshotStatus() *ResourceSnapshotStatus {
	return &s.Status
}

// SetResourceSnapshotStatus sets the status.
func (s *ClusterResourceSnapshot) SetResourceSnapshotStatus(st ResourceSnapshotStatus) {
	s.Status = st
}

// GetResourceSnapshotSpec returns the spec.
func (s *ResourceSnapshot) GetResourceSnapshotSpec() *ResourceSnapshotSpec { return &s.Spec }

// SetResourceSnapshotSpec sets the spec.
func (s *ResourceSnapshot) SetResourceSnapshotSpec(spec ResourceSnapshotSpec) { s.Spec = spec }

// GetResourceSnapshotStatus returns the status.
func (s *ResourceSnapshot) GetResourceSnapshotStatus() *ResourceSnapshotStatus { return &s.Status }

// SetResourceSnapshotStatus sets the status.
func (s *ResourceSnapshot) SetResourceSnapshotStatus(st ResourceSnapshotStatus) { s.Status = st }

// GetPolicySnapshotSpec returns the spec.
func (s *ClusterSchedulingPolicySnapshot) GetPolicySnapshotSpec() *SchedulingPolicySnapshotSpec {
	return &s.Spec
}

// SetPolicySnapshotSpec sets the spec.
func (s *ClusterSchedulingPolicySnapshot) SetPolicySnapshotSpec(spec SchedulingPolicySnapshotSpec) {
	s.Spec = spec
}

// GetPolicySnapshotStatus returns the status.
func (s *ClusterSchedulingPolicySnapshot) GetPolicySnapshotStatus() *SchedulingPolicySnapshotStatus {
	return &s.Status
}

// SetPolicySnapshotStatus sets the status.
func (s *ClusterSchedulingPolicySnapshot) SetPolicySnapshotStatus(st SchedulingPolicySnapshotStatus) {
	s.Status = st
}

// GetPolicySnapshotSpec returns the spec.
func (s *SchedulingPolicySnapshot) GetPolicySnapshotSpec() *SchedulingPolicySnapshotSpec {
	return &s.Spec
}

// SetPolicySnapshotSpec sets the spec.
func (s *SchedulingPolicySnapshot) SetPolicySnapshotSpec(spec SchedulingPolicySnapshotSpec) {
	s.Spec = spec
}

// GetPolicySnapshotStatus returns the status.
func (s *SchedulingPolicySnapshot) GetPolicySnapshotStatus() *SchedulingPolicySnapshotStatus {
	return &s.Status
}

// SetPolicySnapshotStatus sets the status.
func (s *SchedulingPolicySnapshot) SetPolicySnapshotStatus(st SchedulingPolicySnapshotStatus) {
	s.Status = st
}

// GetResourceSnapshotObjs returns the items as ResourceSnapshotObjs.
func (l *ClusterResourceSnapshotList) GetResourceSnapshotObjs() []ResourceSnapshotObj {
	objs := make([]ResourceSnapshotObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

// GetResourceSnapshotObjs returns the items as ResourceSnapshotObjs.
func (l *ResourceSnapshotList) GetResourceSnapshotObjs() []ResourceSnapshotObj {
	objs := make([]ResourceSnapshotObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

// GetPolicySnapshotObjs returns the items as PolicySnapshotObjs.
func (l *ClusterSchedulingPolicySnapshotList) GetPolicySnapshotObjs() []PolicySnapshotObj {
	objs := make([]PolicySnapshotObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

// GetPolicySnapshotObjs returns the items as PolicySnapshotObjs.
func (l *SchedulingPolicySnapshotList) GetPolicySnapshotObjs() []PolicySnapshotObj {
	objs := make([]PolicySnapshotObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

var (
	_ ResourceSnapshotObj     = &ClusterResourceSnapshot{}
	_ ResourceSnapshotObj     = &ResourceSnapshot{}
	_ ResourceSnapshotListObj = &ClusterResourceSnapshotList{}
	_ ResourceSnapshotListObj = &ResourceSnapshotList{}
	_ PolicySnapshotObj       = &ClusterSchedulingPolicySnapshot{}
	_ PolicySnapshotObj       = &SchedulingPolicySnapshot{}
	_ PolicySnapshotListObj   = &ClusterSchedulingPolicySnapshotList{}
	_ PolicySnapshotListObj   = &SchedulingPolicySnapshotList{}
)

func init() {
	SchemeBuilder.Register(
		&ClusterResourceSnapshot{}, &ClusterResourceSnapshotList{},
		&ResourceSnapshot{}, &ResourceSnapshotList{},
		&ClusterSchedulingPolicySnapshot{}, &ClusterSchedulingPolicySnapshotList{},
		&SchedulingPolicySnapshot{}, &SchedulingPolicySnapshotList{},
	)
}
