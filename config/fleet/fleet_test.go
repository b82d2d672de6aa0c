package fleet

import (
	"strings"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"
)

// documents splits an embedded multi-document YAML file.
func documents(t *testing.T, name string) []string {
	t.Helper()
	raw, err := fs.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(raw), "\n---\n")
}

func usersRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	for _, doc := range documents(t, "clusterrole-maximal-permissions.yaml") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			t.Fatal(err)
		}
		if role.Kind == "ClusterRole" && role.Name == "fleet:maximal-permissions:users" {
			return role
		}
	}
	t.Fatal("no ClusterRole fleet:maximal-permissions:users")
	return nil
}

// Every resource of an export held to the maximal permission policy must be
// named by the policy, or users could not even read it; and only the kinds
// users own may be written.
func TestMaximalPermissionPolicyCoversEveryResource(t *testing.T) {
	readOnly, writable := sets.New[string](), sets.New[string]()
	for _, rule := range usersRole(t).Rules {
		for _, res := range rule.Resources {
			if strings.Contains(res, "/") {
				continue
			}
			if sets.New(rule.Verbs...).Has("*") {
				writable.Insert(res)
			} else {
				readOnly.Insert(res)
			}
		}
	}
	if both := readOnly.Intersection(writable); both.Len() > 0 {
		t.Errorf("resources both read-only and writable: %v", sets.List(both))
	}
	for _, name := range []string{PlacementExport, ClusterExport} {
		export := &apisv1alpha2.APIExport{}
		if err := yaml.Unmarshal([]byte(documents(t, "apiexport-"+name+".yaml")[0]), export); err != nil {
			t.Fatal(err)
		}
		if p := export.Spec.MaximalPermissionPolicy; p == nil || p.Local == nil {
			t.Errorf("APIExport %s has no local maximal permission policy", name)
		}
		for _, r := range export.Spec.Resources {
			if !readOnly.Has(r.Name) && !writable.Has(r.Name) {
				t.Errorf("APIExport %s serves %s, which the maximal permission policy does not name", name, r.Name)
			}
		}
	}
	for _, internal := range []string{"clusterresourcebindings", "resourcebindings", "clusterresourcesnapshots", "resourcesnapshots",
		"clusterschedulingpolicysnapshots", "schedulingpolicysnapshots", "works", "internalmemberclusters"} {
		if !readOnly.Has(internal) {
			t.Errorf("%s must be read-only for users", internal)
		}
	}
}
