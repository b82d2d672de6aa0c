package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BindingObj is implemented by ClusterResourceBinding and ResourceBinding.
// +kubebuilder:object:generate=false
type BindingObj interface {
	metav1.Object
	runtime.Object
	GetBindingSpec() *ResourceBindingSpec
	SetBindingSpec(ResourceBindingSpec)
	GetBindingStatus() *ResourceBindingStatus
	SetBindingStatus(ResourceBindingStatus)
}

// BindingListObj is implemented by the binding lists.
// +kubebuilder:object:generate=false
type BindingListObj interface {
	metav1.ListInterface
	runtime.Object
	GetBindingObjs() []BindingObj
}

// BindingState is the lifecycle state of a binding.
// +kubebuilder:validation:Enum=Scheduled;Bound;Unscheduled
type BindingState string

const (
	// BindingStateScheduled: the scheduler picked the cluster; the rollout
	// controller has not started placing resources yet.
	BindingStateScheduled BindingState = "Scheduled"
	// BindingStateBound: resources are (being) placed on the cluster.
	BindingStateBound BindingState = "Bound"
	// BindingStateUnscheduled: the cluster is no longer selected and the
	// resources are to be removed.
	BindingStateUnscheduled BindingState = "Unscheduled"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=crb
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="WorkSynchronized")].status`,name="WorkSynchronized",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Applied")].status`,name="ResourcesApplied",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Available")].status`,name="ResourceAvailable",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterResourceBinding ties a ClusterResourcePlacement to one target
// cluster and pins the snapshots to place there.
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceBindingList is a list of ClusterResourceBindings.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=rb
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="WorkSynchronized")].status`,name="WorkSynchronized",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Applied")].status`,name="ResourcesApplied",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Available")].status`,name="ResourceAvailable",priority=1,type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ResourceBinding is the namespaced twin of ClusterResourceBinding, owned by
// a ResourcePlacement.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceBindingList is a list of ResourceBindings.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// ResourceBindingSpec says what to place on the target cluster.
type ResourceBindingSpec struct {
	// State is Scheduled, Bound or Unscheduled.
	// +required
	State BindingState `json:"state"`

	// ResourceSnapshotName is the master resource snapshot to place.
	// +optional
	ResourceSnapshotName string `json:"resourceSnapshotName,omitempty"`

	// ResourceOverrideSnapshots are the ResourceOverride snapshots to apply.
	// +optional
	ResourceOverrideSnapshots []NamespacedName `json:"resourceOverrideSnapshots,omitempty"`

	// ClusterResourceOverrideSnapshots are the ClusterResourceOverride
	// snapshots to apply.
	// +optional
	ClusterResourceOverrideSnapshots []string `json:"clusterResourceOverrideSnapshots,omitempty"`

	// SchedulingPolicySnapshotName is the policy snapshot that produced the
	// binding.
	// +required
	SchedulingPolicySnapshotName string `json:"schedulingPolicySnapshotName"`

	// TargetCluster is the member cluster name.
	// +required
	TargetCluster string `json:"targetCluster"`

	// ClusterDecision is the scheduler's decision for the cluster.
	// +required
	ClusterDecision ClusterDecision `json:"clusterDecision"`

	// ApplyStrategy is copied from the placement.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`
}

// ResourceBindingStatus is the placement result on the target cluster.
type ResourceBindingStatus struct {
	// FailedPlacements lists resources that failed (capped).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailedPlacements []FailedResourcePlacement `json:"failedPlacements,omitempty"`

	// DriftedPlacements lists drifted resources (capped).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DriftedPlacements []DriftedResourcePlacement `json:"driftedPlacements,omitempty"`

	// DiffedPlacements lists diffed resources (capped).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DiffedPlacements []DiffedResourcePlacement `json:"diffedPlacements,omitempty"`

	// Conditions of the binding.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetBindingSpec returns the spec.
func (b *ClusterResourceBinding) GetBindingSpec() *ResourceBindingSpec { return &b.Spec }

// SetBindingSpec sets the spec.
func (b *ClusterResourceBinding) SetBindingSpec(s ResourceBindingSpec) { b.Spec = s }

// GetBindingStatus returns the status.
func (b *ClusterResourceBinding) GetBindingStatus() *ResourceBindingStatus { return &b.Status }

// SetBindingStatus sets the status.
func (b *ClusterResourceBinding) SetBindingStatus(s ResourceBindingStatus) { b.Status = s }

// GetBindingSpec returns the spec.
func (b *ResourceBinding) GetBindingSpec() *ResourceBindingSpec { return &b.Spec }

// SetBindingSpec sets the spec.
func (b *ResourceBinding) SetBindingSpec(s ResourceBindingSpec) { b.Spec = s }

// GetBindingStatus returns the status.
func (b *ResourceBinding) GetBindingStatus() *ResourceBindingStatus { return &b.Status }

// SetBindingStatus sets the status.
func (b *ResourceBinding) SetBindingStatus(s ResourceBindingStatus) { b.Status = s }

// GetBindingObjs returns the items as BindingObjs.
func (l *ClusterResourceBindingList) GetBindingObjs() []BindingObj {
	objs := make([]BindingObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

// GetBindingObjs returns the items as BindingObjs.
func (l *ResourceBindingList) GetBindingObjs() []BindingObj {
	objs := make([]BindingObj, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return objs
}

var (
	_ BindingObj     = &ClusterResourceBinding{}
	_ BindingObj     = &ResourceBinding{}
	_ BindingListObj = &ClusterResourceBindingList{}
	_ BindingListObj = &ResourceBindingList{}
)

func init() {
	SchemeBuilder.Register(
		&ClusterResourceBinding{}, &ClusterResourceBindingList{},
		&ResourceBinding{}, &ResourceBindingList{},
	)
}
