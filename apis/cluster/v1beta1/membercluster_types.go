package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-cluster},shortName=cluster
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Joined")].status`,name="Joined",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date
// +kubebuilder:printcolumn:JSONPath=`.status.agentStatus[?(@.type=="MemberAgent")].lastReceivedHeartbeat`,name="Member-Agent-Last-Seen",type=date
// +kubebuilder:printcolumn:JSONPath=`.status.properties.kubernetes-fleet\.io/node-count.value`,name="Node-Count",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.resourceUsage.available.cpu`,name="Available-CPU",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.resourceUsage.available.memory`,name="Available-Memory",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.resourceUsage.allocatable.cpu`,name="Allocatable-CPU",type=string,priority=1
// +kubebuilder:printcolumn:JSONPath=`.status.resourceUsage.allocatable.memory`,name="Allocatable-Memory",type=string,priority=1
// The member name is reused as a label value and inside the reserved
// namespace name fleet-member-<name>, so it must be a short DNS label.
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) < 64",message="metadata.name must be at most 63 characters long"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label: lowercase alphanumeric characters or '-', starting and ending with an alphanumeric character"

// MemberCluster represents one cluster that has joined (or is joining) the
// fleet. It is created by the fleet admin on the hub.
type MemberCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MemberClusterSpec `json:"spec"`

	// +optional
	Status MemberClusterStatus `json:"status,omitempty"`
}

// MemberClusterSpec is the desired state of a MemberCluster.
type MemberClusterSpec struct {
	// Identity is the subject the member agent authenticates to the hub as;
	// the hub grants it access to the cluster's reserved namespace.
	// +required
	Identity rbacv1.Subject `json:"identity"`

	// HeartbeatPeriodSeconds is how often the member agent reports in.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +optional
	HeartbeatPeriodSeconds int32 `json:"heartbeatPeriodSeconds,omitempty"`

	// Taints repel placements that do not tolerate them.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Taints []Taint `json:"taints,omitempty"`

	// DeleteOptions tunes the checks run when this MemberCluster is deleted.
	// +optional
	DeleteOptions *DeleteOptions `json:"deleteOptions,omitempty"`
}

// Taint is attached to a MemberCluster; placements without a matching
// toleration will not be scheduled onto the cluster.
type Taint struct {
	// Key is the taint key (a label-style qualified name).
	// +kubebuilder:validation:MaxLength=317
	// +required
	Key string `json:"key"`

	// Value is the taint value.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect is the taint effect; only NoSchedule is supported.
	// +kubebuilder:validation:Enum=NoSchedule
	// +required
	Effect corev1.TaintEffect `json:"effect"`
}

// DeleteValidationMode selects how strictly deletion of a MemberCluster is
// checked.
// +kubebuilder:validation:Enum=Strict;Skip
type DeleteValidationMode string

const (
	// DeleteValidationModeStrict denies deletion while the cluster still
	// has dependants (e.g. exported services).
	DeleteValidationModeStrict DeleteValidationMode = "Strict"
	// DeleteValidationModeSkip lets deletion proceed unconditionally.
	DeleteValidationModeSkip DeleteValidationMode = "Skip"
)

// DeleteOptions configures MemberCluster deletion.
type DeleteOptions struct {
	// ValidationMode is Strict (default) or Skip.
	// +kubebuilder:default=Strict
	// +optional
	ValidationMode DeleteValidationMode `json:"validationMode,omitempty"`
}

// PropertyName is the name of a cluster property, e.g.
// kubernetes-fleet.io/node-count.
type PropertyName string

// PropertyValue is one observed cluster property.
type PropertyValue struct {
	// Value is the observed value; numeric properties use resource.Quantity
	// syntax so that they can be compared by property selectors.
	// +required
	Value string `json:"value"`

	// ObservationTime is when the value was observed.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`
}

// ResourceUsage summarises the compute resources of a member cluster.
type ResourceUsage struct {
	// Capacity is the total capacity of all nodes.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// Allocatable is the capacity available to workloads.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// Available is allocatable minus what running pods request.
	// +optional
	Available corev1.ResourceList `json:"available,omitempty"`

	// ObservationTime is when the usage was observed.
	// +optional
	ObservationTime metav1.Time `json:"observationTime,omitempty"`
}

// AgentType names an agent that runs in a member cluster.
// +kubebuilder:validation:Enum=MemberAgent;MultiClusterServiceAgent;ServiceExportImportAgent
type AgentType string

const (
	// MemberAgent applies Works and reports cluster state.
	MemberAgent AgentType = "MemberAgent"
	// MultiClusterServiceAgent handles multi-cluster services.
	MultiClusterServiceAgent AgentType = "MultiClusterServiceAgent"
	// ServiceExportImportAgent handles service export/import.
	ServiceExportImportAgent AgentType = "ServiceExportImportAgent"
)

// AgentStatus is the status reported by one member-side agent.
type AgentStatus struct {
	// Type is the agent type.
	// +required
	Type AgentType `json:"type"`

	// Conditions of the agent (Joined, Healthy).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastReceivedHeartbeat is when the hub last heard from the agent.
	// +optional
	LastReceivedHeartbeat metav1.Time `json:"lastReceivedHeartbeat,omitempty"`
}

// MemberClusterStatus is the observed state of a MemberCluster; the hub
// copies most of it from the InternalMemberCluster.
type MemberClusterStatus struct {
	// Conditions of the member cluster (ReadyToJoin, Joined, ...).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Properties are the cluster properties collected by the property provider.
	// +optional
	Properties map[PropertyName]PropertyValue `json:"properties,omitempty"`

	// ResourceUsage is the cluster's compute resource usage.
	// +optional
	ResourceUsage ResourceUsage `json:"resourceUsage,omitempty"`

	// Namespaces maps each namespace in the member cluster to the name of
	// the Work that placed it (empty when not placed by the fleet).
	// +optional
	Namespaces map[string]string `json:"namespaces,omitempty"`

	// AgentStatus holds one entry per member-side agent.
	// +optional
	AgentStatus []AgentStatus `json:"agentStatus,omitempty"`
}

// +kubebuilder:object:root=true

// MemberClusterList is a list of MemberClusters.
type MemberClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemberCluster `json:"items"`
}

// ClusterState is the desired membership state told to the member agents.
// +kubebuilder:validation:Enum=Join;Leave
type ClusterState string

const (
	// ClusterStateJoin asks the agents to join the fleet.
	ClusterStateJoin ClusterState = "Join"
	// ClusterStateLeave asks the agents to leave the fleet.
	ClusterStateLeave ClusterState = "Leave"
)

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-cluster},shortName=imc
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.state`,name="State",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// InternalMemberCluster lives in the reserved namespace fleet-member-<name>
// and is the channel between the hub and the member agents: the hub writes
// the spec, the agents write the status.
type InternalMemberCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec InternalMemberClusterSpec `json:"spec"`

	// +optional
	Status InternalMemberClusterStatus `json:"status,omitempty"`
}

// InternalMemberClusterSpec is set by the hub.
type InternalMemberClusterSpec struct {
	// State is Join or Leave.
	// +required
	State ClusterState `json:"state"`

	// HeartbeatPeriodSeconds is how often the member agent reports in.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +optional
	HeartbeatPeriodSeconds int32 `json:"heartbeatPeriodSeconds,omitempty"`
}

// InternalMemberClusterStatus is written by the member agents and mirrors
// MemberClusterStatus.
type InternalMemberClusterStatus struct {
	// Conditions of the cluster.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Properties are the collected cluster properties.
	// +optional
	Properties map[PropertyName]PropertyValue `json:"properties,omitempty"`

	// ResourceUsage is the cluster's compute resource usage.
	// +optional
	ResourceUsage ResourceUsage `json:"resourceUsage,omitempty"`

	// Namespaces maps member namespaces to the Work that placed them.
	// +optional
	Namespaces map[string]string `json:"namespaces,omitempty"`

	// AgentStatus holds one entry per member-side agent.
	// +optional
	AgentStatus []AgentStatus `json:"agentStatus,omitempty"`
}

// +kubebuilder:object:root=true

// InternalMemberClusterList is a list of InternalMemberClusters.
type InternalMemberClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InternalMemberCluster `json:"items"`
}

// GetAgentStatus returns the status entry of the given agent, or nil.
func (s *MemberClusterStatus) GetAgentStatus(t AgentType) *AgentStatus {
	for i := range s.AgentStatus {
		if s.AgentStatus[i].Type == t {
			return &s.AgentStatus[i]
		}
	}
	return nil
}

// GetAgentStatus returns the status entry of the given agent, or nil.
func (s *InternalMemberClusterStatus) GetAgentStatus(t AgentType) *AgentStatus {
	for i := range s.AgentStatus {
		if s.AgentStatus[i].Type == t {
			return &s.AgentStatus[i]
		}
	}
	return nil
}

func init() {
	SchemeBuilder.Register(&MemberCluster{}, &MemberClusterList{}, &InternalMemberCluster{}, &InternalMemberClusterList{})
}
