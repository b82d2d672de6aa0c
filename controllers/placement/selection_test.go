package placement

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// servedResource is one resource the fake workspace serves.
type servedResource struct {
	groupVersion, resource, kind string
	namespaced                   bool
}

var served = []servedResource{
	{"v1", "namespaces", "Namespace", false},
	{"v1", "configmaps", "ConfigMap", true},
	{"v1", "secrets", "Secret", true},
	{"v1", "serviceaccounts", "ServiceAccount", true},
	{"v1", "serviceaccounts/token", "TokenRequest", true}, // a subresource is never listed
	{"v1", "services", "Service", true},
	{"v1", "pods", "Pod", true},
	{"v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
	{"v1", "events", "Event", true},
	{"apps/v1", "deployments", "Deployment", true},
	{"coordination.k8s.io/v1", "leases", "Lease", true},
	{"rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", false},
	{"apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition", false},
	{"placement.kubernetes-fleet.io/v1beta1", "resourceenvelopes", "ResourceEnvelope", true},
	{"placement.kubernetes-fleet.io/v1beta1", "resourceplacements", "ResourcePlacement", true},
}

// workspaceObjects is the content of the fake workspace: namespace "app"
// holds one object of every sort, "other" a ConfigMap that matches the same
// labels, and the reserved namespaces some objects of their own.
func workspaceObjects() []runtime.Object {
	web := map[string]string{"tier": "web"}
	return []runtime.Object{
		withLabels(object("v1", "Namespace", "", "app", nil), map[string]string{"team": "a"}),
		object("v1", "Namespace", "", "other", nil),
		object("v1", "Namespace", "", "default", nil),
		object("v1", "Namespace", "", "kube-system", nil),
		object("v1", "Namespace", "", "fleet-system", nil),
		object("v1", "Namespace", "", "kcp-system", nil),

		withLabels(object("v1", "ConfigMap", "app", "cfg", nil), web),
		object("v1", "ConfigMap", "app", "kube-root-ca.crt", nil),
		object("v1", "ServiceAccount", "app", "default", nil),
		object("v1", "ServiceAccount", "app", "builder", nil),
		object("v1", "Secret", "app", "builder-token", map[string]any{"type": "kubernetes.io/service-account-token"}),
		object("v1", "Service", "app", "web", map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.1"}}),
		object("v1", "Pod", "app", "web-1", nil),
		object("v1", "PersistentVolumeClaim", "app", "data", nil),
		object("v1", "Event", "app", "web-1.123", nil),
		object("coordination.k8s.io/v1", "Lease", "app", "leader", nil),
		withLabels(object("apps/v1", "Deployment", "app", "web", nil), web),
		object("placement.kubernetes-fleet.io/v1beta1", "ResourceEnvelope", "app", "env", nil),
		object("placement.kubernetes-fleet.io/v1beta1", "ResourcePlacement", "app", "rp", nil),

		withLabels(object("v1", "ConfigMap", "other", "cfg2", nil), web),
		object("v1", "ConfigMap", "default", "cfg3", nil),
		object("v1", "ConfigMap", "kube-system", "cfg4", nil),

		withLabels(object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader", nil), map[string]string{"team": "a"}),
		object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "writer", nil),
		object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com", nil),
	}
}

// fakeWorkspace serves the resources above from fake discovery and dynamic
// clients, wired like the real ones in workspaces/clients.
func fakeWorkspace(objs ...runtime.Object) *clients.Workspace {
	byGV := map[string]*metav1.APIResourceList{}
	var lists []*metav1.APIResourceList
	listKinds := map[schema.GroupVersionResource]string{}
	for _, r := range served {
		l := byGV[r.groupVersion]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: r.groupVersion}
			byGV[r.groupVersion] = l
			lists = append(lists, l)
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name: r.resource, Kind: r.kind, Namespaced: r.namespaced,
			Verbs: metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"},
		})
		if !strings.Contains(r.resource, "/") {
			gv, _ := schema.ParseGroupVersion(r.groupVersion)
			listKinds[gv.WithResource(r.resource)] = r.kind + "List"
		}
	}
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
	return &clients.Workspace{
		Dynamic:   fakedynamic.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...),
		Discovery: disco,
		Mapper:    clients.NewLazyMapper(disco),
	}
}

// ids names objects as Kind/name or Kind/namespace/name, in order.
func ids(objs []*unstructured.Unstructured) []string {
	out := []string{}
	for _, o := range objs {
		id := o.GetKind() + "/" + o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			id = o.GetKind() + "/" + ns + "/" + o.GetName()
		}
		out = append(out, id)
	}
	return out
}

func term(gv, kind, name string) placementv1beta1.ResourceSelectorTerm {
	g, _ := schema.ParseGroupVersion(gv)
	return placementv1beta1.ResourceSelectorTerm{Group: g.Group, Version: g.Version, Kind: kind, Name: name}
}

func labelled(t placementv1beta1.ResourceSelectorTerm, labels map[string]string) placementv1beta1.ResourceSelectorTerm {
	t.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	return t
}

func namespaceTerm(name string, scope placementv1beta1.SelectionScope) placementv1beta1.ResourceSelectorTerm {
	t := term("v1", "Namespace", name)
	t.SelectionScope = scope
	return t
}

func TestSelectResources(t *testing.T) {
	clusterRoles, configMaps := term("rbac.authorization.k8s.io/v1", "ClusterRole", ""), term("v1", "ConfigMap", "")
	appWithResources := []string{
		"Namespace/app", "ConfigMap/app/cfg", "Service/app/web", "ServiceAccount/app/builder",
		"Deployment/app/web", "ResourceEnvelope/app/env",
	}
	tests := []struct {
		name      string
		namespace string // the ResourcePlacement's; "" for a ClusterResourcePlacement
		terms     []placementv1beta1.ResourceSelectorTerm
		want      []string
		wantErr   string
	}{
		{
			name:  "a kind alone selects every object of it",
			terms: []placementv1beta1.ResourceSelectorTerm{clusterRoles},
			want:  []string{"ClusterRole/reader", "ClusterRole/writer"},
		},
		{
			name:  "a name selects that object",
			terms: []placementv1beta1.ResourceSelectorTerm{term("rbac.authorization.k8s.io/v1", "ClusterRole", "writer")},
			want:  []string{"ClusterRole/writer"},
		},
		{
			name:  "a missing name selects nothing",
			terms: []placementv1beta1.ResourceSelectorTerm{term("rbac.authorization.k8s.io/v1", "ClusterRole", "nobody")},
			want:  []string{},
		},
		{
			name:  "a label selector selects the matching objects",
			terms: []placementv1beta1.ResourceSelectorTerm{labelled(clusterRoles, map[string]string{"team": "a"})},
			want:  []string{"ClusterRole/reader"},
		},
		{
			name:  "NamespaceOnly selects only the namespace",
			terms: []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", placementv1beta1.NamespaceOnly)},
			want:  []string{"Namespace/app"},
		},
		{
			name:  "a namespace selects everything placeable in it by default",
			terms: []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", "")},
			want:  appWithResources,
		},
		{
			name:  "NamespaceWithResources is the default",
			terms: []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", placementv1beta1.NamespaceWithResources)},
			want:  appWithResources,
		},
		{
			name:  "namespaces can be selected by label",
			terms: []placementv1beta1.ResourceSelectorTerm{labelled(namespaceTerm("", placementv1beta1.NamespaceOnly), map[string]string{"team": "a"})},
			want:  []string{"Namespace/app"},
		},
		{
			name: "NamespaceWithResourceSelectors adds what the other selectors pick in that namespace",
			terms: []placementv1beta1.ResourceSelectorTerm{
				namespaceTerm("app", placementv1beta1.NamespaceWithResourceSelectors),
				configMaps,
				labelled(term("apps/v1", "Deployment", ""), map[string]string{"tier": "none"}),
				term("rbac.authorization.k8s.io/v1", "ClusterRole", "reader"),
			},
			want: []string{"Namespace/app", "ConfigMap/app/cfg", "ClusterRole/reader"},
		},
		{
			name:  "reserved namespaces are never selected",
			terms: []placementv1beta1.ResourceSelectorTerm{namespaceTerm("", placementv1beta1.NamespaceOnly)},
			want:  []string{"Namespace/app", "Namespace/other"},
		},
		{
			name:    "a reserved namespace named explicitly is invalid",
			terms:   []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", ""), namespaceTerm("kube-system", "")},
			wantErr: "resourceSelectors[1] selects namespace kube-system, which is reserved (default, kcp-system, kube-*, fleet-* are never placed); select a namespace of your own",
		},
		{
			name:    "the same selector twice is invalid",
			terms:   []placementv1beta1.ResourceSelectorTerm{labelled(clusterRoles, map[string]string{"team": "a"}), namespaceTerm("app", ""), labelled(clusterRoles, map[string]string{"team": "a"})},
			wantErr: "resourceSelectors[0] and resourceSelectors[2] are the same selector (ClusterRole.rbac.authorization.k8s.io by labelSelector team=a); remove one of them",
		},
		{
			name:      "PersistentVolumeClaims are never placed",
			namespace: "app",
			terms:     []placementv1beta1.ResourceSelectorTerm{term("v1", "PersistentVolumeClaim", "")},
			wantErr:   "PersistentVolumeClaim cannot be placed",
		},
		{
			name: "namespaces come first, then CRDs, then by group, kind, namespace and name",
			terms: []placementv1beta1.ResourceSelectorTerm{
				term("rbac.authorization.k8s.io/v1", "ClusterRole", "reader"),
				term("apiextensions.k8s.io/v1", "CustomResourceDefinition", ""),
				namespaceTerm("other", placementv1beta1.NamespaceOnly),
				namespaceTerm("app", ""),
			},
			want: []string{
				"Namespace/app", "Namespace/other", "CustomResourceDefinition/widgets.example.com",
				"ConfigMap/app/cfg", "Service/app/web", "ServiceAccount/app/builder",
				"Deployment/app/web", "ResourceEnvelope/app/env", "ClusterRole/reader",
			},
		},
		{
			name:    "a namespaced kind needs a scoping namespace in a ClusterResourcePlacement",
			terms:   []placementv1beta1.ResourceSelectorTerm{configMaps},
			wantErr: "ConfigMap is namespaced: a ClusterResourcePlacement selects cluster-scoped resources and whole namespaces; select its namespace, use selectionScope NamespaceWithResourceSelectors, or use a ResourcePlacement",
		},
		{
			name:    "a kind the workspace does not serve is invalid",
			terms:   []placementv1beta1.ResourceSelectorTerm{term("example.com/v1", "Widget", "")},
			wantErr: "the workspace does not serve example.com/v1, Kind=Widget; check group, version and kind",
		},
		{
			name:    "a kind that is never placed is invalid",
			terms:   []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", placementv1beta1.NamespaceWithResourceSelectors), term("v1", "Pod", "")},
			wantErr: "Pod cannot be placed",
		},
		{
			name:    "a kind of its own a team defines in the placement group is never placed",
			terms:   []placementv1beta1.ResourceSelectorTerm{term("placement.kubernetes-fleet.io/v1beta1", "Gizmo", "")},
			wantErr: "Gizmo cannot be placed",
		},
		{
			name:    "a malformed label selector is invalid",
			terms:   []placementv1beta1.ResourceSelectorTerm{labelled(clusterRoles, map[string]string{"team": "not a value!"})},
			wantErr: "labelSelector of ClusterRole",
		},
		{
			name:      "a ResourcePlacement selects only in its own namespace",
			namespace: "app",
			terms:     []placementv1beta1.ResourceSelectorTerm{configMaps, labelled(term("apps/v1", "Deployment", ""), map[string]string{"tier": "web"})},
			want:      []string{"ConfigMap/app/cfg", "Deployment/app/web"},
		},
		{
			name:      "a ResourcePlacement does not reach other namespaces by name",
			namespace: "app",
			terms:     []placementv1beta1.ResourceSelectorTerm{term("v1", "ConfigMap", "cfg2")},
			want:      []string{},
		},
		{
			name:      "a ResourcePlacement rejects cluster-scoped kinds",
			namespace: "app",
			terms:     []placementv1beta1.ResourceSelectorTerm{clusterRoles},
			wantErr:   "ClusterRole is cluster-scoped: a ResourcePlacement selects objects in its own namespace; use a ClusterResourcePlacement",
		},
		{
			name:      "a ResourcePlacement rejects Namespaces",
			namespace: "app",
			terms:     []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", "")},
			wantErr:   "Namespace is cluster-scoped",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &selector{ws: fakeWorkspace(workspaceObjects()...)}
			got, err := s.selectResources(context.Background(), tc.namespace, tc.terms)
			if tc.wantErr != "" {
				if !errors.Is(err, errInvalidSelectors) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want errInvalidSelectors saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(got), tc.want) {
				t.Errorf("selected\n%v\nwant\n%v", ids(got), tc.want)
			}
		})
	}
}

func TestSelectResourcesSanitizes(t *testing.T) {
	svc := object("v1", "Service", "app", "web", map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.1"}})
	svc.SetUID("uid-1")
	svc.SetAnnotations(map[string]string{"kcp.io/cluster": "2abc"})
	s := &selector{ws: fakeWorkspace(svc)}
	got, err := s.selectResources(context.Background(), "app", []placementv1beta1.ResourceSelectorTerm{term("v1", "Service", "web")})
	if err != nil || len(got) != 1 {
		t.Fatalf("selected %v, %v", ids(got), err)
	}
	if _, found, _ := unstructured.NestedString(got[0].Object, "spec", "clusterIP"); found || got[0].GetUID() != "" || got[0].GetAnnotations() != nil {
		t.Errorf("selected object was not sanitized: %v", got[0].Object)
	}
}

func TestSelectResourcesIsStable(t *testing.T) {
	terms := []placementv1beta1.ResourceSelectorTerm{namespaceTerm("app", ""), term("rbac.authorization.k8s.io/v1", "ClusterRole", "")}
	var first []string
	for i := 0; i < 5; i++ {
		got, err := (&selector{ws: fakeWorkspace(workspaceObjects()...)}).selectResources(context.Background(), "", terms)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = ids(got)
		} else if !reflect.DeepEqual(ids(got), first) {
			t.Fatalf("selection %d = %v, first was %v", i, ids(got), first)
		}
	}
}
