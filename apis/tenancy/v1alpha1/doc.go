// Package v1alpha1 holds Fleetplane's tenancy API: which member clusters each
// team workspace may place onto. It exists only in the platform workspace.
// +kubebuilder:object:generate=true
// +groupName=tenancy.fleetplane.io
package v1alpha1
