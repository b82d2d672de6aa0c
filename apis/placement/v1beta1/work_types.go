package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Applied")].status`,name="Applied",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Available")].status`,name="Available",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// Work is a set of manifests to apply on one member cluster. It lives on the
// hub in the member's reserved namespace (fleet-member-<cluster>), where the
// member agent picks it up and reports results back in the status.
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec WorkSpec `json:"spec"`

	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkList is a list of Works.
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}

// WorkSpec is what to apply.
type WorkSpec struct {
	// Workload holds the manifests.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// ApplyStrategy says how to apply the manifests.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// ReportBackStrategy controls reporting member status back.
	// +optional
	ReportBackStrategy *ReportBackStrategy `json:"reportBackStrategy,omitempty"`
}

// WorkloadTemplate is the list of manifests of a Work.
type WorkloadTemplate struct {
	// Manifests are applied in dependency order ("waves"), not list order.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one arbitrary Kubernetes object, stored unpruned.
type Manifest struct {
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// WorkStatus is reported by the member agent.
type WorkStatus struct {
	// Conditions of the Work (Applied, Available, DiffReported, StatusTrimmed).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestConditions has one entry per manifest.
	// +optional
	ManifestConditions []ManifestCondition `json:"manifestConditions,omitempty"`
}

// WorkResourceIdentifier identifies a manifest of a Work and the object it
// maps to in the member cluster.
type WorkResourceIdentifier struct {
	// Ordinal is the index of the manifest in the Work.
	// +required
	Ordinal int `json:"ordinal"`

	// Group of the object.
	// +optional
	Group string `json:"group,omitempty"`

	// Version of the object.
	// +optional
	Version string `json:"version,omitempty"`

	// Kind of the object.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Resource is the plural resource name.
	// +optional
	Resource string `json:"resource,omitempty"`

	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the object.
	// +optional
	Name string `json:"name,omitempty"`
}

// DriftDetails describes drift found on an applied object.
type DriftDetails struct {
	// ObservationTime is when the drift was last observed.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// ObservedInMemberClusterGeneration is the member object's generation.
	// +required
	ObservedInMemberClusterGeneration int64 `json:"observedInMemberClusterGeneration"`

	// FirstDriftedObservedTime is when the drift was first observed.
	// +required
	FirstDriftedObservedTime metav1.Time `json:"firstDriftedObservedTime"`

	// ObservedDrifts are the drifted fields.
	// +optional
	ObservedDrifts []PatchDetail `json:"observedDrifts,omitempty"`
}

// DiffDetails describes differences between a manifest and the member object.
type DiffDetails struct {
	// ObservationTime is when the diff was last observed.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// ObservedInMemberClusterGeneration is the member object's generation;
	// nil when the object does not exist there.
	// +optional
	ObservedInMemberClusterGeneration *int64 `json:"observedInMemberClusterGeneration,omitempty"`

	// FirstDiffedObservedTime is when the diff was first observed.
	// +required
	FirstDiffedObservedTime metav1.Time `json:"firstDiffedObservedTime"`

	// ObservedDiffs are the differing fields.
	// +optional
	ObservedDiffs []PatchDetail `json:"observedDiffs,omitempty"`
}

// BackReportedStatus is the member object's status mirrored to the hub.
type BackReportedStatus struct {
	// ObservedStatus is the raw status.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +required
	ObservedStatus runtime.RawExtension `json:"observedStatus"`

	// ObservationTime is when the status was read.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`
}

// ManifestCondition is the result for one manifest.
type ManifestCondition struct {
	// Identifier of the manifest.
	// +required
	Identifier WorkResourceIdentifier `json:"identifier"`

	// Conditions of the manifest (Applied, Available, DiffReported).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DriftDetails is set when drift was found.
	// +optional
	DriftDetails *DriftDetails `json:"driftDetails,omitempty"`

	// DiffDetails is set when differences were found.
	// +optional
	DiffDetails *DiffDetails `json:"diffDetails,omitempty"`

	// BackReportedStatus is set when status is mirrored back.
	// +optional
	BackReportedStatus *BackReportedStatus `json:"backReportedStatus,omitempty"`

	// Workload is what the member's object says about whether it serves;
	// set for kinds whose status says it (Fleetplane's addition).
	// +optional
	Workload *WorkloadState `json:"workload,omitempty"`

	// Warnings are the member's recent Warning events about the object or
	// the objects it runs (its pods), latest per reason (Fleetplane's
	// addition).
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Warnings []MemberWarning `json:"warnings,omitempty"`
}

// MemberWarning is a Warning event a member cluster recorded about a placed
// object or one it runs.
type MemberWarning struct {
	// Reason is the event's reason (Failed, BackOff, FailedScheduling, ...).
	// +required
	Reason string `json:"reason"`

	// Message is the event's message, cut to 512 characters.
	// +optional
	Message string `json:"message,omitempty"`

	// Object is the object the event is about, as "Kind name" (a pod of a
	// placed Deployment, say).
	// +optional
	Object string `json:"object,omitempty"`
}

// WorkloadState is the part of a member object's status that says whether
// it serves, read the same way for every kind: replicas for workloads,
// counts for Jobs, addresses for Services, a phase, and the object's own
// conditions. Fields a kind does not have stay unset.
type WorkloadState struct {
	// Replicas is how many replicas (or, for a DaemonSet, scheduled pods)
	// the object wants.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// ReadyReplicas is how many of them are ready.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// UpdatedReplicas is how many run the latest spec.
	// +optional
	UpdatedReplicas *int32 `json:"updatedReplicas,omitempty"`

	// AvailableReplicas is how many have been ready for minReadySeconds.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// Active is how many pods of a Job run.
	// +optional
	Active *int32 `json:"active,omitempty"`

	// Succeeded is how many pods of a Job succeeded.
	// +optional
	Succeeded *int32 `json:"succeeded,omitempty"`

	// Failed is how many pods of a Job failed.
	// +optional
	Failed *int32 `json:"failed,omitempty"`

	// LoadBalancerIngress are a Service's load-balancer addresses (IPs or
	// host names).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	LoadBalancerIngress []string `json:"loadBalancerIngress,omitempty"`

	// Phase is the object's status.phase (a PersistentVolumeClaim's Bound,
	// a Pod's Running, ...).
	// +optional
	Phase string `json:"phase,omitempty"`

	// Conditions are the object's own status conditions, messages cut to
	// 256 characters.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []ObjectCondition `json:"conditions,omitempty"`
}

// ObjectCondition is a condition of a placed object as its controller wrote
// it; unlike metav1.Condition nothing in it is required.
type ObjectCondition struct {
	// Type of the condition.
	// +required
	Type string `json:"type"`

	// Status is True, False or Unknown.
	// +optional
	Status string `json:"status,omitempty"`

	// Reason is the controller's one-word reason.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message says more.
	// +optional
	Message string `json:"message,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.workNamespace`,name="Work-Namespace",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// AppliedWork lives in the member cluster and records what a Work applied
// there. Applied objects are owned by it, so deleting it cleans them up.
type AppliedWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AppliedWorkSpec `json:"spec"`

	// +optional
	Status AppliedWorkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AppliedWorkList is a list of AppliedWorks.
type AppliedWorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppliedWork `json:"items"`
}

// AppliedWorkSpec points at the hub Work.
type AppliedWorkSpec struct {
	// WorkName is the name of the Work on the hub.
	// +required
	WorkName string `json:"workName"`

	// WorkNamespace is the namespace of the Work on the hub.
	// +required
	WorkNamespace string `json:"workNamespace"`
}

// AppliedWorkStatus lists the applied objects.
type AppliedWorkStatus struct {
	// AppliedResources are the objects applied in the member cluster.
	// +optional
	AppliedResources []AppliedResourceMeta `json:"appliedResources,omitempty"`
}

// AppliedResourceMeta identifies an applied object.
type AppliedResourceMeta struct {
	WorkResourceIdentifier `json:",inline"`

	// UID of the object in the member cluster.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

func init() {
	SchemeBuilder.Register(&Work{}, &WorkList{}, &AppliedWork{}, &AppliedWorkList{})
}
