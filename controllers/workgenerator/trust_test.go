package workgenerator

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

func controllerRef(name, uid string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{Kind: "ClusterResourcePlacement", Name: name, UID: types.UID("uid-" + uid), Controller: ptr.To(true)}}
}

func TestVerifyOrigin(t *testing.T) {
	placement := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-web"}}
	member := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	grantAll := func(*clusterv1beta1.MemberCluster) bool { return true }
	tests := []struct {
		name      string
		placement placementv1beta1.PlacementObj
		mutate    func(b placementv1beta1.BindingObj, group []placementv1beta1.ResourceSnapshotObj)
		member    *clusterv1beta1.MemberCluster
		granted   func(*clusterv1beta1.MemberCluster) bool
		want      string // "" means trusted
	}{
		{name: "made by the scheduler for its placement", placement: placement, member: member, granted: grantAll},
		{name: "placement gone", member: member, granted: grantAll, want: "its placement web does not exist"},
		{name: "no controller", placement: placement, member: member, granted: grantAll, want: "not made by the scheduler",
			mutate: func(b placementv1beta1.BindingObj, _ []placementv1beta1.ResourceSnapshotObj) {
				b.SetOwnerReferences(nil)
			}},
		{name: "controlled by an earlier placement of the same name", placement: placement, member: member, granted: grantAll, want: "not made by the scheduler",
			mutate: func(b placementv1beta1.BindingObj, _ []placementv1beta1.ResourceSnapshotObj) {
				b.SetOwnerReferences(controllerRef("web", "old"))
			}},
		{name: "a snapshot of someone else", placement: placement, member: member, granted: grantAll, want: "resource snapshot web-3-1 does not belong to placement web",
			mutate: func(_ placementv1beta1.BindingObj, group []placementv1beta1.ResourceSnapshotObj) {
				group[1].SetOwnerReferences(nil)
			}},
		{name: "cluster gone", placement: placement, granted: grantAll, want: "member cluster m1 does not exist"},
		{name: "cluster not granted", placement: placement, member: member, granted: func(*clusterv1beta1.MemberCluster) bool { return false },
			want: "member cluster m1 is not granted to this workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := binding("")
			b.SetOwnerReferences(controllerRef("web", "web"))
			group := snapshotGroup("", 2)
			for _, s := range group {
				s.SetOwnerReferences(controllerRef("web", "web"))
			}
			if tc.mutate != nil {
				tc.mutate(b, group)
			}
			err := verifyOrigin(tc.placement, b, group, tc.member, tc.granted)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want the binding trusted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A team's objects are checked after overrides and with envelopes open, on
// the bytes the member receives; refusals name the envelope and its entry.
func TestRenderHoldsTeamsToTheirPolicy(t *testing.T) {
	o := origin{workspace: workspace, binding: binding("")}
	render := func(raw string, ov overrides.Set, policy *teampolicy.Policy) error {
		s := snapshotGroup("", 1)[0]
		s.SetResourceSnapshotSpec(placementv1beta1.ResourceSnapshotSpec{SelectedResources: []placementv1beta1.ResourceContent{
			{RawExtension: runtime.RawExtension{Raw: []byte(raw)}},
		}})
		_, err := o.works(0, s, renderer{overrides: ov, cluster: overrides.Cluster{Name: "m1"}, policy: policy})
		return err
	}
	envelope := func(kind, entry string) string {
		return `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"` + kind + `","metadata":{"name":"e","namespace":"app"},"data":{"x.yaml":` + entry + `}}`
	}
	const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"}}`
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"app"}}`
	kindOverride := overrides.Set{Cluster: []placementv1beta1.ClusterResourceOverrideSnapshot{{
		ObjectMeta: metav1.ObjectMeta{Name: "sneak-0"},
		Spec: placementv1beta1.ClusterResourceOverrideSnapshotSpec{OverrideSpec: placementv1beta1.ClusterResourceOverrideSpec{
			ClusterResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{}, OverrideType: placementv1beta1.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{Operator: "add", Path: "/metadata/labels", Value: apiextensionsv1.JSON{Raw: []byte(`{"a":"b"}`)}}},
			}}},
		}},
	}}}
	team := &teampolicy.Policy{ReservedNamespaces: []string{"platform-*"}}
	tests := []struct {
		name   string
		raw    string
		ov     overrides.Set
		policy *teampolicy.Policy
		want   string // "" means rendered
	}{
		{name: "a namespaced object", raw: cm, policy: team},
		{name: "a CRD without a grant", raw: crd, policy: team, want: "CustomResourceDefinition widgets.example.com: no ClusterGrant"},
		{name: "a CRD with a grant", raw: crd, policy: &teampolicy.Policy{CustomResourceDefinitions: true}},
		{name: "a CRD from the platform", raw: crd},
		{name: "an overridden CRD without a grant", raw: crd, ov: kindOverride, policy: team, want: "no ClusterGrant"},
		{name: "a CRD in an envelope", raw: envelope("ClusterResourceEnvelope", crd), policy: team,
			want: `ClusterResourceEnvelope app/e, entry "x.yaml", on member cluster m1: CustomResourceDefinition widgets.example.com`},
		{name: "a reserved namespace in a ResourceEnvelope (no namespace at all: it carries namespaced objects only)", policy: team,
			raw:  envelope("ResourceEnvelope", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-bar","labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`),
			want: `ResourceEnvelope app/e, entry "x.yaml": Namespace kube-bar is cluster-scoped: a ResourceEnvelope carries namespaced objects only`},
		{name: "a hub-reserved namespace in a ResourceEnvelope", policy: team,
			raw:  envelope("ResourceEnvelope", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"platform-x"}}`),
			want: "Namespace platform-x is cluster-scoped"},
		{name: "a ClusterRole in a ResourceEnvelope", policy: team,
			raw:  envelope("ResourceEnvelope", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"}}`),
			want: "ClusterRole r is cluster-scoped"},
		{name: "a webhook in a ClusterResourceEnvelope", policy: team,
			raw:  envelope("ClusterResourceEnvelope", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"w"}}`),
			want: "ValidatingWebhookConfiguration w is cluster-scoped"},
		{name: "a case variant of kind", raw: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","Kind":"ConfigMap","metadata":{"name":"x","namespace":"app"}}`,
			want: `has the key "Kind", a variant of "kind"`},
		{name: "a repeated kind", raw: `{"apiVersion":"v1","kind":"ConfigMap","kind":"Namespace","metadata":{"name":"x","namespace":"app"}}`,
			want: `repeats a key`},
		{name: "a case variant of metadata.namespace in an envelope", policy: team,
			raw:  envelope("ResourceEnvelope", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","Namespace":"kube-system"}}`),
			want: `ResourceEnvelope app/e, entry "x.yaml": the manifest's metadata has the key "Namespace"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := render(tc.raw, tc.ov, tc.policy)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want it rendered", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
