package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EnvelopeReader is implemented by both envelope kinds.
// +kubebuilder:object:generate=false
type EnvelopeReader interface {
	metav1.Object
	runtime.Object
	GetData() map[string]EnvelopedObject
	// GetEnvelopeType reports which envelope kind this is.
	GetEnvelopeType() EnvelopeType
}

// EnvelopedObject is one object carried in an envelope. It is stored
// unpruned since the hub does not know (or serve) its schema.
// +kubebuilder:validation:EmbeddedResource
// +kubebuilder:pruning:PreserveUnknownFields
type EnvelopedObject struct {
	runtime.RawExtension `json:",inline"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement}
// +kubebuilder:storageversion

// ClusterResourceEnvelope carries cluster-scoped objects that must not take
// effect on the hub (e.g. webhooks); they are only applied on members.
type ClusterResourceEnvelope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data maps a file-like key to one cluster-scoped object.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=50
	// +required
	Data map[string]EnvelopedObject `json:"data"`
}

// +kubebuilder:object:root=true

// ClusterResourceEnvelopeList is a list of ClusterResourceEnvelopes.
type ClusterResourceEnvelopeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceEnvelope `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement}
// +kubebuilder:storageversion

// ResourceEnvelope carries namespaced objects of its own namespace that must
// not take effect on the hub; they are only applied on members.
type ResourceEnvelope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data maps a file-like key to one namespaced object.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=50
	// +required
	Data map[string]EnvelopedObject `json:"data"`
}

// +kubebuilder:object:root=true

// ResourceEnvelopeList is a list of ResourceEnvelopes.
type ResourceEnvelopeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceEnvelope `json:"items"`
}

// GetData returns the enveloped objects.
func (e *ClusterResourceEnvelope) GetData() map[string]EnvelopedObject { return e.Data }

// GetEnvelopeType returns ClusterResourceEnvelopeType.
func (e *ClusterResourceEnvelope) GetEnvelopeType() EnvelopeType {
	return ClusterResourceEnvelopeType
}

// GetData returns the enveloped objects.
func (e *ResourceEnvelope) GetData() map[string]EnvelopedObject { return e.Data }

// GetEnvelopeType returns ResourceEnvelopeType.
func (e *ResourceEnvelope) GetEnvelopeType() EnvelopeType { return ResourceEnvelopeType }

var (
	_ EnvelopeReader = &ClusterResourceEnvelope{}
	_ EnvelopeReader = &ResourceEnvelope{}
)

func init() {
	SchemeBuilder.Register(
		&ClusterResourceEnvelope{}, &ClusterResourceEnvelopeList{},
		&ResourceEnvelope{}, &ResourceEnvelopeList{},
	)
}
