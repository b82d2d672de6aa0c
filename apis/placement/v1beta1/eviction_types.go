package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=crpe
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Valid")].status`,name="Valid",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Executed")].status`,name="Executed",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterResourcePlacementEviction asks to remove a placement's resources
// from one cluster, subject to the placement's disruption budget. It is
// evaluated once; re-create it to retry.
type ClusterResourcePlacementEviction struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PlacementEvictionSpec `json:"spec"`

	// +optional
	Status PlacementEvictionStatus `json:"status,omitempty"`
}

// PlacementEvictionSpec names the placement and cluster; both are fixed
// because the eviction is a one-shot request.
type PlacementEvictionSpec struct {
	// PlacementName is the placement to evict from.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="placementName is immutable"
	// +required
	PlacementName string `json:"placementName"`

	// ClusterName is the cluster to evict from.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	// +required
	ClusterName string `json:"clusterName"`
}

// PlacementEvictionStatus reports the outcome.
type PlacementEvictionStatus struct {
	// Conditions: Valid and Executed (both terminal).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementEvictionList is a list of ClusterResourcePlacementEvictions.
type ClusterResourcePlacementEvictionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacementEviction `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=crpdb
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.maxUnavailable`,name="Max-Unavailable",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.minAvailable`,name="Min-Available",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterResourcePlacementDisruptionBudget limits voluntary evictions from
// the placement with the same name.
type ClusterResourcePlacementDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PlacementDisruptionBudgetSpec `json:"spec"`
}

// PlacementDisruptionBudgetSpec sets either maxUnavailable or minAvailable.
// For PickN, percentages are of numberOfClusters, rounded up.
// +kubebuilder:validation:XValidation:rule="!(has(self.maxUnavailable) && has(self.minAvailable))",message="maxUnavailable and minAvailable are mutually exclusive; set only one of them",fieldPath=".minAvailable"
type PlacementDisruptionBudgetSpec struct {
	// MaxUnavailable is the most clusters that may be unavailable after an
	// eviction (not supported for PickAll).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^(100|[0-9]{1,2})%$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="maxUnavailable must be a non-negative integer or a percentage between 0% and 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MinAvailable is the fewest clusters that must stay available after an
	// eviction (integer only for PickAll).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^(100|[0-9]{1,2})%$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="minAvailable must be a non-negative integer or a percentage between 0% and 100%"
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementDisruptionBudgetList is a list of
// ClusterResourcePlacementDisruptionBudgets.
type ClusterResourcePlacementDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacementDisruptionBudget `json:"items"`
}

func init() {
	SchemeBuilder.Register(
		&ClusterResourcePlacementEviction{}, &ClusterResourcePlacementEvictionList{},
		&ClusterResourcePlacementDisruptionBudget{}, &ClusterResourcePlacementDisruptionBudgetList{},
	)
}
