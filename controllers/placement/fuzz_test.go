package placement

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// FuzzSelectResources resolves two arbitrary resource selector terms, for a
// ClusterResourcePlacement or a ResourcePlacement in namespace "app", over
// the fake workspace: it must never panic, fail only with an invalid
// selector error (reported on the placement, not retried), and select no
// reserved, runtime or internal object, nothing twice, nothing outside a
// ResourcePlacement's namespace, and no status.
func FuzzSelectResources(f *testing.F) {
	f.Add(false, "v1", "Namespace", "app", "", "", "", "", "rbac.authorization.k8s.io/v1", "ClusterRole")
	f.Add(false, "v1", "Namespace", "app", "NamespaceWithResourceSelectors", "tier", "In", "web", "apps/v1", "Deployment")
	f.Add(true, "v1", "ConfigMap", "", "", "tier", "NotIn", "db", "v1", "Secret")
	f.Add(false, "v1", "Namespace", "", "", "team", "Exists", "", "v1", "Pod")
	f.Add(true, "placement.kubernetes-fleet.io/v1beta1", "ResourcePlacement", "rp", "", "", "", "", "v1", "Namespace")
	f.Fuzz(func(t *testing.T, rp bool, gv, kind, name, scope, key, op, value, gv2, kind2 string) {
		first := term(gv, kind, name)
		first.SelectionScope = placementv1beta1.SelectionScope(scope)
		if key != "" || op != "" {
			first.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: key, Operator: metav1.LabelSelectorOperator(op), Values: []string{value},
			}}}
		}
		namespace := ""
		if rp {
			namespace = "app"
		}
		s := &selector{ws: fakeWorkspace(workspaceObjects()...)}
		objs, err := s.selectResources(context.Background(), namespace, []placementv1beta1.ResourceSelectorTerm{first, term(gv2, kind2, "")})
		if err != nil {
			if !errors.Is(err, errInvalidSelectors) {
				t.Fatalf("selection failed with an error that is retried, not reported: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		last := 0
		for _, o := range objs {
			k := objectKey(o)
			switch gvk := o.GroupVersionKind(); {
			case seen[k]:
				t.Fatalf("%s selected twice", k)
			case skipObject(o), skipKind(gvk.GroupKind()), gvk == namespaceGVK && reservedNamespace(o.GetName()):
				t.Fatalf("%s must never be selected", k)
			case rp && o.GetNamespace() != namespace:
				t.Fatalf("a ResourcePlacement in %q selected %s", namespace, k)
			case o.Object["status"] != nil:
				t.Fatalf("%s kept its status", k)
			case sortPriority(o) < last:
				t.Fatalf("%s is out of order", k)
			}
			seen[k], last = true, sortPriority(o)
		}
	})
}
