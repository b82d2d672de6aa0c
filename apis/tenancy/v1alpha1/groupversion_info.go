package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group version of the tenancy API.
	GroupVersion = schema.GroupVersion{Group: "tenancy.fleetplane.io", Version: "v1alpha1"}
	// SchemeBuilder registers the tenancy types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the tenancy types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
