package placement

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

// checkTeamObjects refuses, for a team workspace's placement, what a team may
// not place whatever its grants: cluster-scoped kinds other than Namespaces
// and CRDs (which the grants allow per cluster, checked when the Work is
// written), and anything in or named after a reserved namespace (reserved
// are the hub's own beyond teampolicy.ReservedNamespaces). Platform-wide
// objects are placed from root:fleet.
func checkTeamObjects(objs []*unstructured.Unstructured, reserved []string) error {
	policy := teampolicy.Policy{ReservedNamespaces: reserved, CustomResourceDefinitions: true}
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		if refusal := policy.CheckObject(gk, o.GetNamespace(), o.GetName(), o.GetNamespace() == ""); refusal != nil {
			return invalid("%s", refusal.Message)
		}
	}
	return nil
}
