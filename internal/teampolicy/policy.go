// Package teampolicy holds the rules every object a team workspace places
// must keep on a member cluster: which kinds and namespaces it may touch,
// what its ClusterGrants add, and how its workloads may run. The hub checks
// them on what it selects and, after overrides and envelopes, on the exact
// bytes of every Work; the member's syncer checks them again before it
// writes, from the policy the hub records on the Work.
package teampolicy

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// ReservedNamespaces are the member namespaces no team placement ever
// touches, whatever the hub adds to them: Kubernetes', kcp's and the
// fleet's own.
var ReservedNamespaces = []string{"default", "kube-*", "fleet-*", "kcp-*"}

var (
	namespaceGK = schema.GroupKind{Kind: "Namespace"}
	crdGK       = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// Policy is what a team workspace may do on one member cluster.
type Policy struct {
	// ReservedNamespaces are namespace patterns (path.Match syntax) the
	// team never places into nor takes over, beyond ReservedNamespaces.
	ReservedNamespaces []string
	// CustomResourceDefinitions allows placing CRDs, which every tenant
	// of the member shares.
	CustomResourceDefinitions bool
	// TakeOverNamespaces are namespace patterns where objects that exist
	// on the member and that no placement created may be adopted.
	TakeOverNamespaces []string
	// PodSecurity is the Pod Security Standards level the team's
	// namespaces and workloads are held to on the member.
	PodSecurity Level
}

// Refusal is an object a team may not place, and why.
type Refusal struct {
	// Reason is the apply result reason the member reports.
	Reason  string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

func refuse(format string, args ...any) *Refusal {
	return &Refusal{Reason: placementv1beta1.ApplyResultFailedToApply, Message: fmt.Sprintf(format, args...)}
}

// Reserved tells whether a namespace is reserved on the member.
func (p Policy) Reserved(namespace string) bool {
	return placementv1beta1.NamespaceMatches(ReservedNamespaces, namespace) || placementv1beta1.NamespaceMatches(p.ReservedNamespaces, namespace)
}

// reservedList is every reserved pattern, for messages.
func (p Policy) reservedList() string {
	return strings.Join(append(slices.Clone(ReservedNamespaces), p.ReservedNamespaces...), ", ")
}

// CheckObject holds one object to the kinds and namespaces a team may
// place: Namespaces and namespaced objects outside the reserved
// namespaces, and CustomResourceDefinitions where a grant allows them.
// Other cluster-scoped kinds are placed from root:fleet by platform admins.
func (p Policy) CheckObject(gk schema.GroupKind, namespace, name string, clusterScoped bool) *Refusal {
	switch {
	case gk == namespaceGK:
		if p.Reserved(name) {
			return refuse("namespace %s is reserved on member clusters (%s): team placements never touch it; use a namespace of your own", name, p.reservedList())
		}
	case clusterScoped && gk == crdGK:
		if !p.CustomResourceDefinitions {
			return refuse("CustomResourceDefinition %s: no ClusterGrant covering this member cluster lets the workspace place CRDs, which every tenant of the cluster shares; a platform admin can set spec.allowCustomResourceDefinitions on one, or place the CRD from root:fleet", name)
		}
	case clusterScoped:
		return refuse("%s %s is cluster-scoped: a team workspace places only Namespaces, namespaced objects and, where a ClusterGrant allows, CustomResourceDefinitions; ask a platform admin to place it from root:fleet", gk.Kind, name)
	case namespace == "":
		return refuse("%s %s is namespaced but names no namespace: set metadata.namespace", gk.Kind, name)
	case p.Reserved(namespace):
		return refuse("%s %s/%s is in namespace %s, which is reserved on member clusters (%s): team placements never touch it; use a namespace of your own", gk.Kind, namespace, name, namespace, p.reservedList())
	}
	return nil
}

// MayTakeOver tells whether an object that exists on the member and that
// no placement created may be adopted: only in a namespace a grant lists in
// takeOverNamespaces (a Namespace by its own name), never a reserved one,
// and never another cluster-scoped object, whatever the patterns say.
func (p Policy) MayTakeOver(gk schema.GroupKind, namespace, name string, clusterScoped bool) bool {
	switch {
	case gk == namespaceGK:
		namespace = name
	case clusterScoped:
		return false
	}
	return namespace != "" && !p.Reserved(namespace) && placementv1beta1.NamespaceMatches(p.TakeOverNamespaces, namespace)
}

// clusterScopedKinds are the built-in cluster-scoped kinds of Kubernetes:
// the hub judges an object's scope by them before the member's API server
// does (an envelope entry carries no scope of its own).
var clusterScopedKinds = map[schema.GroupKind]bool{
	namespaceGK:                true,
	crdGK:                      true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:  true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "apiserverinternal.k8s.io", Kind: "StorageVersion"}:                       true,
	{Group: "policy", Kind: "PodSecurityPolicy"}:                                      true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                             true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:                  true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:                   true,
}

// ClusterScoped judges, where the member's API server cannot be asked, the
// scope of an object: a built-in cluster-scoped kind, or one that names no
// namespace. The syncer asks its member.
func ClusterScoped(gk schema.GroupKind, namespace string) bool {
	return BuiltinClusterScoped(gk) || namespace == ""
}

// BuiltinClusterScoped tells whether gk is a built-in cluster-scoped kind
// of Kubernetes.
func BuiltinClusterScoped(gk schema.GroupKind) bool { return clusterScopedKinds[gk] }
