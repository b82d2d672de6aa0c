// Package v1beta1 holds the cluster.kubernetes-fleet.io/v1beta1 API: the
// MemberCluster objects that represent joined clusters on the hub and the
// per-cluster InternalMemberCluster objects that member agents report into.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.kubernetes-fleet.io
package v1beta1
