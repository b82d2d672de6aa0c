// Package v1beta1 holds the placement.kubernetes-fleet.io/v1beta1 API:
// placements, the snapshots and bindings derived from them, Works, overrides,
// staged updates, evictions and envelopes.
//
// +kubebuilder:object:generate=true
// +groupName=placement.kubernetes-fleet.io
package v1beta1
