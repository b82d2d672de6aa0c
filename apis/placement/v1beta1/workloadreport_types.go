package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=cwr
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.objectCount`,name="Objects",type=integer
// +kubebuilder:printcolumn:JSONPath=`.status.availableClusters`,name="Available",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.readyReplicas`,name="Ready",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.summary`,name="Summary",type=string,priority=1
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterWorkloadReport shows how the objects of the ClusterResourcePlacement
// of the same name run on each cluster: replicas, Job counts, addresses,
// phases and conditions as the members report them, per object and cluster
// and summed over clusters. The hub writes it; it is read-only to users.
// (Fleetplane's addition to the KubeFleet API.)
type ClusterWorkloadReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Status WorkloadReportStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterWorkloadReportList is a list of ClusterWorkloadReports.
type ClusterWorkloadReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterWorkloadReport `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=wr
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.objectCount`,name="Objects",type=integer
// +kubebuilder:printcolumn:JSONPath=`.status.availableClusters`,name="Available",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.readyReplicas`,name="Ready",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.summary`,name="Summary",type=string,priority=1
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// WorkloadReport is ClusterWorkloadReport for the ResourcePlacement of the
// same namespace and name.
type WorkloadReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Status WorkloadReportStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadReportList is a list of WorkloadReports.
type WorkloadReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadReport `json:"items"`
}

// WorkloadReportStatus is a placement's objects as its clusters run them.
type WorkloadReportStatus struct {
	// ObjectCount is how many objects the placement placed.
	// +optional
	ObjectCount int32 `json:"objectCount"`

	// AvailableClusters is "available/placed": the clusters where every
	// object is available, of those the placement's objects are on.
	// +optional
	AvailableClusters string `json:"availableClusters,omitempty"`

	// ReadyReplicas is "ready/wanted" replicas of the placement's workloads,
	// summed over clusters; empty when it places none.
	// +optional
	ReadyReplicas string `json:"readyReplicas,omitempty"`

	// Summary is one line per object that is not available everywhere, or
	// that all is.
	// +optional
	Summary string `json:"summary,omitempty"`

	// Objects has one entry per placed object.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Objects []ObjectWorkloadReport `json:"objects,omitempty"`

	// Conditions: Reported says whether every cluster reported on the
	// placement's current objects; StatusBackReported whether the
	// placement's reportBackStrategy could be honoured.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ObjectWorkloadReport is one placed object on every cluster it is on.
type ObjectWorkloadReport struct {
	ResourceIdentifier `json:",inline"`

	// Summary is, e.g., "3/3 clusters available, 27/30 replicas ready".
	// +optional
	Summary string `json:"summary,omitempty"`

	// PlacedClusters is how many clusters the object is placed on.
	// +optional
	PlacedClusters int32 `json:"placedClusters"`

	// AvailableClusters is how many of them report it available.
	// +optional
	AvailableClusters int32 `json:"availableClusters"`

	// Replicas and ReadyReplicas are summed over the clusters, for
	// workloads.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// Clusters has the object's state on each cluster that reports more
	// than its availability (workloads, Jobs, Services, claims, objects
	// with conditions, warnings), or that does not report it available.
	// +optional
	Clusters []ClusterWorkloadState `json:"clusters,omitempty"`
}

// ClusterWorkloadState is one object on one cluster.
type ClusterWorkloadState struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Available is the object's Available status there: True, False or
	// Unknown, with the reason when it is not True.
	// +optional
	Available metav1.ConditionStatus `json:"available,omitempty"`

	// +optional
	Reason string `json:"reason,omitempty"`

	// Workload is what the member's object says about whether it serves.
	// +optional
	Workload *WorkloadState `json:"workload,omitempty"`

	// Warnings are the member's recent Warning events about the object or
	// its pods, latest per reason.
	// +optional
	Warnings []MemberWarning `json:"warnings,omitempty"`

	// BackReportedStatus is the member object's whole status, when the
	// placement's reportBackStrategy mirrors it to the Work API.
	// +optional
	BackReportedStatus *BackReportedStatus `json:"backReportedStatus,omitempty"`
}

// Conditions of a workload report.
const (
	// WorkloadReportReportedConditionType is True once every cluster of
	// the placement reported on its current objects.
	WorkloadReportReportedConditionType = "Reported"
	// WorkloadReportStatusBackReportedConditionType says whether the
	// placement's reportBackStrategy is honoured.
	WorkloadReportStatusBackReportedConditionType = "StatusBackReported"

	// WorkloadReportAllReportedReason: every cluster reported.
	WorkloadReportAllReportedReason = "AllClustersReported"
	// WorkloadReportPendingReason: some cluster has not reported yet.
	WorkloadReportPendingReason = "ReportPending"
	// WorkloadReportTrimmedReason: the report lists fewer objects or
	// clusters than there are, to stay within the size of an object.
	WorkloadReportTrimmedReason = "Trimmed"

	// StatusBackReportedReason: the statuses are mirrored.
	StatusBackReportedReason = "StatusMirrored"
	// StatusBackReportNotSingleClusterReason: OriginalResource needs a
	// placement that targets exactly one cluster.
	StatusBackReportNotSingleClusterReason = "NotSingleCluster"
	// StatusBackReportTooLargeReason: an object's status is too large to
	// mirror.
	StatusBackReportTooLargeReason = "StatusTooLarge"
	// StatusBackReportFailedReason: writing a mirrored status failed.
	StatusBackReportFailedReason = "MirrorFailed"
)

// MaxBackReportedStatusBytes is the largest member status the syncer
// mirrors for one object; a larger one is left out and said so.
const MaxBackReportedStatusBytes = 32 << 10

func init() {
	SchemeBuilder.Register(&ClusterWorkloadReport{}, &ClusterWorkloadReportList{}, &WorkloadReport{}, &WorkloadReportList{})
}

// WorkloadReportObj is implemented by ClusterWorkloadReport and
// WorkloadReport.
// +kubebuilder:object:generate=false
type WorkloadReportObj interface {
	metav1.Object
	runtime.Object
	GetWorkloadReportStatus() *WorkloadReportStatus
}

// GetWorkloadReportStatus returns the status.
func (r *ClusterWorkloadReport) GetWorkloadReportStatus() *WorkloadReportStatus { return &r.Status }

// GetWorkloadReportStatus returns the status.
func (r *WorkloadReport) GetWorkloadReportStatus() *WorkloadReportStatus { return &r.Status }
