package resourcechange

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func object(group, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind})
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestMaySelect(t *testing.T) {
	nsTerm := func(name string) placementv1beta1.ResourceSelectorTerm {
		return placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "Namespace", Name: name}
	}
	roleTerm := placementv1beta1.ResourceSelectorTerm{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	cmTerm := placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "ConfigMap"}
	crp := func(terms ...placementv1beta1.ResourceSelectorTerm) placementv1beta1.PlacementObj {
		return &placementv1beta1.ClusterResourcePlacement{Spec: placementv1beta1.PlacementSpec{ResourceSelectors: terms}}
	}
	rp := func(ns string, terms ...placementv1beta1.ResourceSelectorTerm) placementv1beta1.PlacementObj {
		return &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: placementv1beta1.PlacementSpec{ResourceSelectors: terms}}
	}
	cases := []struct {
		name      string
		placement placementv1beta1.PlacementObj
		obj       *unstructured.Unstructured
		want      bool
	}{
		{"CRP: an object of a selected kind", crp(roleTerm), object("rbac.authorization.k8s.io", "ClusterRole", "", "reader"), true},
		{"CRP: an object of another kind", crp(roleTerm), object("", "ConfigMap", "app", "c"), false},
		{"CRP: the selected namespace itself", crp(nsTerm("app")), object("", "Namespace", "", "app"), true},
		{"CRP: an object in the selected namespace", crp(nsTerm("app")), object("", "ConfigMap", "app", "c"), true},
		{"CRP: an object in another namespace", crp(nsTerm("app")), object("", "ConfigMap", "other", "c"), false},
		{"CRP: objects in any namespace when namespaces are selected by label", crp(nsTerm("")), object("apps", "Deployment", "other", "d"), true},
		{"CRP: a cluster-scoped object of another kind with a namespace selector", crp(nsTerm("app")), object("rbac.authorization.k8s.io", "ClusterRole", "", "r"), false},
		{"RP: a selected kind in its namespace", rp("app", cmTerm), object("", "ConfigMap", "app", "c"), true},
		{"RP: a selected kind in another namespace", rp("app", cmTerm), object("", "ConfigMap", "other", "c"), false},
		{"RP: another kind in its namespace", rp("app", cmTerm), object("", "Secret", "app", "s"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := maySelect(tc.placement, tc.obj); got != tc.want {
				t.Errorf("maySelect = %v, want %v", got, tc.want)
			}
		})
	}
}

func crd(established bool, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"}, Versions: versions,
		},
	}
	status := apiextensionsv1.ConditionFalse
	if established {
		status = apiextensionsv1.ConditionTrue
	}
	c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: status}}
	return c
}

func TestServedResource(t *testing.T) {
	v := func(name string, served, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: served, Storage: storage}
	}
	cases := []struct {
		name      string
		crd       *apiextensionsv1.CustomResourceDefinition
		want      string
		watchable bool
	}{
		{"not established yet", crd(false, v("v1", true, true)), "", false},
		{"the storage version", crd(true, v("v1alpha1", true, false), v("v1", true, true)), "v1", true},
		{"the first served version when storage is not served", crd(true, v("v1alpha1", false, true), v("v1beta1", true, false), v("v1", true, false)), "v1beta1", true},
		{"nothing served", crd(true, v("v1", false, true)), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gvr, ok := servedResource(tc.crd)
			if ok != tc.watchable || (ok && gvr != (schema.GroupVersionResource{Group: "example.com", Version: tc.want, Resource: "widgets"})) {
				t.Errorf("servedResource = %v, %v; want version %q, %v", gvr, ok, tc.want, tc.watchable)
			}
		})
	}
}

func TestAsCRDSkipsBoundAPIs(t *testing.T) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd(true))
	if err != nil {
		t.Fatal(err)
	}
	for cluster, want := range map[string]bool{"2abcxyz": true, "system:bound-crds": false, "": false} {
		u := &unstructured.Unstructured{Object: raw}
		u = u.DeepCopy()
		if cluster != "" {
			u.SetAnnotations(map[string]string{"kcp.io/cluster": cluster})
		}
		if _, _, ok := asCRD(u); ok != want {
			t.Errorf("asCRD in %q = %v, want %v", cluster, ok, want)
		}
	}
}

func TestIdentityOnlyKeepsWhatSelectionNeeds(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": "db", "namespace": "team", "uid": "u1", "resourceVersion": "7",
			"labels":        map[string]any{"app": "db"},
			"annotations":   map[string]any{"kcp.io/cluster": "ws1", "kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
		},
		"data": map[string]any{"password": "c2VjcmV0"},
	}}
	got, err := identityOnly(u)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": "db", "namespace": "team", "uid": "u1", "resourceVersion": "7",
			"labels":      map[string]any{"app": "db"},
			"annotations": map[string]any{"kcp.io/cluster": "ws1"},
		},
	}
	if diff := cmp.Diff(want, got.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("identityOnly (-want +got):\n%s", diff)
	}
}

// A CRD without its schemas still says which resource it serves, and in
// which workspace.
func TestCRDServingKeepsTheServedResource(t *testing.T) {
	validation := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}
	full := crd(true,
		apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1alpha1", Served: true, Schema: validation},
		apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true, Storage: true, Schema: validation})
	full.Annotations = map[string]string{"kcp.io/cluster": "2abcxyz"}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(full)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := crdServing(&unstructured.Unstructured{Object: raw})
	if err != nil {
		t.Fatal(err)
	}
	ws, got, ok := asCRD(kept)
	if !ok || ws != "2abcxyz" {
		t.Fatalf("asCRD = %q, %v", ws, ok)
	}
	for _, v := range got.Spec.Versions {
		if v.Schema != nil {
			t.Fatalf("version %s kept its schema", v.Name)
		}
	}
	gvr, watchable := servedResource(got)
	if want := (schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}); !watchable || gvr != want {
		t.Fatalf("servedResource = %v, %v; want %v", gvr, watchable, want)
	}
}
