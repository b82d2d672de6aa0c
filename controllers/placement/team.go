package placement

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// TeamReservedNamespaces are the member namespaces no team placement ever
// touches, besides those the hub adds (--team-reserved-namespaces): the
// reserved ones, and every kcp-* namespace.
var TeamReservedNamespaces = append(slices.Clone(ReservedNamespaces), "kcp-*")

var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// checkTeamObjects refuses, for a team workspace's placement, what a team may
// not place whatever its grants: cluster-scoped kinds other than Namespaces
// and CRDs (which the grants allow per cluster), and anything in or named
// after a reserved namespace. Platform-wide objects are placed from
// root:fleet.
func checkTeamObjects(objs []*unstructured.Unstructured, reserved []string) error {
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		ns := o.GetNamespace()
		switch {
		case gk == namespaceGVK.GroupKind():
			if placementv1beta1.NamespaceMatches(reserved, o.GetName()) {
				return invalid("namespace %s is reserved on member clusters (%v): team placements never touch it; use a namespace of your own", o.GetName(), reserved)
			}
		case ns == "" && gk != crdGK:
			return invalid("%s %s is cluster-scoped: a team workspace places only Namespaces, and CustomResourceDefinitions where a ClusterGrant allows; remove it from the selectors, or ask a platform admin to place it from root:fleet", o.GetKind(), o.GetName())
		case ns != "" && placementv1beta1.NamespaceMatches(reserved, ns):
			return invalid("%s %s/%s is in namespace %s, which is reserved on member clusters (%v): team placements never touch it; use a namespace of your own", o.GetKind(), ns, o.GetName(), ns, reserved)
		}
	}
	return nil
}
