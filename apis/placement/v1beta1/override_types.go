package v1beta1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement}
// +kubebuilder:storageversion

// ClusterResourceOverride patches (or drops) selected cluster-scoped
// resources, and everything in selected namespaces, for the clusters its
// rules match. It is applied before any ResourceOverride.
type ClusterResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterResourceOverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterResourceOverrideList is a list of ClusterResourceOverrides.
type ClusterResourceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceOverride `json:"items"`
}

// ClusterResourceOverrideSpec is the spec of a ClusterResourceOverride.
// Re-pointing an override at another placement would silently change what
// is deployed where, so the placement reference is fixed at creation.
// +kubebuilder:validation:XValidation:rule="!has(self.placement) || self.placement.scope != 'Namespaced'",message="a ClusterResourceOverride can only reference a ClusterResourcePlacement; placement.scope must be Cluster",fieldPath=".placement.scope"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.placement) == has(self.placement) && (!has(self.placement) || self.placement == oldSelf.placement)",message="placement is immutable: it cannot be added, removed or changed after creation",fieldPath=".placement"
type ClusterResourceOverrideSpec struct {
	// Placement limits the override to one placement; unset applies it to
	// all placements selecting the resources.
	// +optional
	Placement *PlacementRef `json:"placement,omitempty"`

	// ClusterResourceSelectors pick the resources to override by name;
	// selecting a Namespace covers everything in it.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(s, has(s.name) && size(s.name) > 0 && !has(s.labelSelector))",message="each clusterResourceSelector must select a resource by name; labelSelector is not supported"
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.group == a.group && b.version == a.version && b.kind == a.kind && b.name == a.name))",message="clusterResourceSelectors must be unique"
	// +required
	ClusterResourceSelectors []ResourceSelectorTerm `json:"clusterResourceSelectors"`

	// Policy holds the override rules.
	// +required
	Policy *OverridePolicy `json:"policy"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement}
// +kubebuilder:storageversion

// ResourceOverride patches (or drops) selected resources of its namespace for
// the clusters its rules match. It is applied after ClusterResourceOverrides,
// so it wins on conflicts.
type ResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceOverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ResourceOverrideList is a list of ResourceOverrides.
type ResourceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceOverride `json:"items"`
}

// ResourceOverrideSpec is the spec of a ResourceOverride.
// +kubebuilder:validation:XValidation:rule="has(oldSelf.placement) == has(self.placement) && (!has(self.placement) || self.placement == oldSelf.placement)",message="placement is immutable: it cannot be added, removed or changed after creation",fieldPath=".placement"
type ResourceOverrideSpec struct {
	// Placement limits the override to one placement: a
	// ClusterResourcePlacement (scope Cluster) or a ResourcePlacement in the
	// same namespace (scope Namespaced).
	// +optional
	Placement *PlacementRef `json:"placement,omitempty"`

	// ResourceSelectors pick the resources to override.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b == a))",message="resourceSelectors must be unique"
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Policy holds the override rules.
	// +required
	Policy *OverridePolicy `json:"policy"`
}

// ResourceScope is the scope of a referenced placement.
// +kubebuilder:validation:Enum=Cluster;Namespaced
type ResourceScope string

const (
	// ClusterScoped references a ClusterResourcePlacement.
	ClusterScoped ResourceScope = "Cluster"
	// NamespaceScoped references a ResourcePlacement.
	NamespaceScoped ResourceScope = "Namespaced"
)

// PlacementRef references a placement.
type PlacementRef struct {
	// Name of the placement.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Scope is Cluster (default, a CRP) or Namespaced (an RP).
	// +kubebuilder:default=Cluster
	// +optional
	Scope ResourceScope `json:"scope,omitempty"`
}

// ResourceSelector selects one namespaced resource by name.
type ResourceSelector struct {
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

	// Name of the resource.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// OverridePolicy holds override rules.
type OverridePolicy struct {
	// OverrideRules are evaluated per cluster.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +required
	OverrideRules []OverrideRule `json:"overrideRules"`
}

// OverrideType is what an override rule does.
// +kubebuilder:validation:Enum=JSONPatch;Delete
type OverrideType string

const (
	// JSONPatchOverrideType patches the resources.
	JSONPatchOverrideType OverrideType = "JSONPatch"
	// DeleteOverrideType keeps the resources off the matched clusters.
	DeleteOverrideType OverrideType = "Delete"
)

// OverrideRule applies to the clusters its selector matches. Only label
// selectors are supported here; cluster properties are not.
// +kubebuilder:validation:XValidation:rule="self.overrideType != 'Delete' || !has(self.jsonPatchOverrides) || size(self.jsonPatchOverrides) == 0",message="jsonPatchOverrides cannot be set when overrideType is Delete"
// +kubebuilder:validation:XValidation:rule="self.overrideType != 'JSONPatch' || (has(self.jsonPatchOverrides) && size(self.jsonPatchOverrides) > 0)",message="jsonPatchOverrides must have at least one entry when overrideType is JSONPatch"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterSelector) || !has(self.clusterSelector.clusterSelectorTerms) || self.clusterSelector.clusterSelectorTerms.all(t, !has(t.propertySelector) && !has(t.propertySorter))",message="override clusterSelectorTerms only support labelSelector; propertySelector and propertySorter are not allowed"
type OverrideRule struct {
	// ClusterSelector picks the clusters; an empty selector matches all
	// clusters, an unset one matches none.
	// +optional
	ClusterSelector *ClusterSelector `json:"clusterSelector,omitempty"`

	// OverrideType is JSONPatch (default) or Delete.
	// +kubebuilder:default=JSONPatch
	// +optional
	OverrideType OverrideType `json:"overrideType,omitempty"`

	// JSONPatchOverrides are applied in order. Values may use
	// ${MEMBER-CLUSTER-NAME} and ${MEMBER-CLUSTER-LABEL-KEY-<key>}.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	JSONPatchOverrides []JSONPatchOverride `json:"jsonPatchOverrides,omitempty"`
}

// JSONPatchOverrideOperator is a JSON patch operation.
// +kubebuilder:validation:Enum=add;remove;replace
type JSONPatchOverrideOperator string

const (
	JSONPatchOverrideOpAdd     JSONPatchOverrideOperator = "add"
	JSONPatchOverrideOpRemove  JSONPatchOverrideOperator = "remove"
	JSONPatchOverrideOpReplace JSONPatchOverrideOperator = "replace"
)

// JSONPatchOverride is one RFC 6902 operation. Identity and status fields
// are off limits so that an override cannot change what object it is or
// fake its state; only labels and annotations of metadata may be patched.
// The identity keys are refused in any letter case: a member's API server
// reads keys exactly, a reader matching them loosely could take a
// "/Kind" added beside "kind" for the object's kind.
// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="path must be a JSON pointer starting with '/'"
// +kubebuilder:validation:XValidation:rule="!(self.path.lowerAscii() == '/kind' || self.path.lowerAscii().startsWith('/kind/') || self.path.lowerAscii() == '/apiversion' || self.path.lowerAscii().startsWith('/apiversion/') || self.path.lowerAscii() == '/status' || self.path.lowerAscii().startsWith('/status/'))",message="path cannot target /kind, /apiVersion or /status, in any letter case"
// +kubebuilder:validation:XValidation:rule="!(self.path.lowerAscii() == '/metadata' || self.path.lowerAscii().startsWith('/metadata/')) || self.path == '/metadata/labels' || self.path.startsWith('/metadata/labels/') || self.path == '/metadata/annotations' || self.path.startsWith('/metadata/annotations/')",message="path under /metadata (in any letter case) can only target /metadata/labels or /metadata/annotations, spelled exactly"
type JSONPatchOverride struct {
	// Operator is add, remove or replace.
	// +required
	Operator JSONPatchOverrideOperator `json:"op"`

	// Path is a JSON pointer into the resource.
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Path string `json:"path"`

	// Value is any JSON value; not allowed for remove. That rule cannot be
	// expressed in CEL (the field is schemaless), so controllers enforce it.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement}
// +kubebuilder:storageversion

// ClusterResourceOverrideSnapshot is an immutable copy of a
// ClusterResourceOverride ({override}-{index}).
type ClusterResourceOverrideSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterResourceOverrideSnapshotSpec `json:"spec"`
}

// ClusterResourceOverrideSnapshotSpec holds the copied spec and its hash.
type ClusterResourceOverrideSnapshotSpec struct {
	// OverrideSpec is the copied spec.
	// +required
	OverrideSpec ClusterResourceOverrideSpec `json:"overrideSpec"`

	// OverrideHash is the sha256 of the spec.
	// +required
	OverrideHash []byte `json:"overrideHash"`
}

// +kubebuilder:object:root=true

// ClusterResourceOverrideSnapshotList is a list of ClusterResourceOverrideSnapshots.
type ClusterResourceOverrideSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceOverrideSnapshot `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement}
// +kubebuilder:storageversion

// ResourceOverrideSnapshot is an immutable copy of a ResourceOverride.
type ResourceOverrideSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceOverrideSnapshotSpec `json:"spec"`
}

// ResourceOverrideSnapshotSpec holds the copied spec and its hash.
type ResourceOverrideSnapshotSpec struct {
	// OverrideSpec is the copied spec.
	// +required
	OverrideSpec ResourceOverrideSpec `json:"overrideSpec"`

	// OverrideHash is the sha256 of the spec.
	// +required
	OverrideHash []byte `json:"overrideHash"`
}

// +kubebuilder:object:root=true

// ResourceOverrideSnapshotList is a list of ResourceOverrideSnapshots.
type ResourceOverrideSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceOverrideSnapshot `json:"items"`
}

func init() {
	SchemeBuilder.Register(
		&ClusterResourceOverride{}, &ClusterResourceOverrideList{},
		&ResourceOverride{}, &ResourceOverrideList{},
		&ClusterResourceOverrideSnapshot{}, &ClusterResourceOverrideSnapshotList{},
		&ResourceOverrideSnapshot{}, &ResourceOverrideSnapshotList{},
	)
}
