package overrides

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"app","labels":{"tier":"web"}},"spec":{"replicas":1}}`

func value(v string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(v)} }

func selectAll() *placementv1beta1.ClusterSelector { return &placementv1beta1.ClusterSelector{} }

func selectLabels(l map[string]string) *placementv1beta1.ClusterSelector {
	return &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: l}}}}
}

func patchRule(sel *placementv1beta1.ClusterSelector, ops ...placementv1beta1.JSONPatchOverride) placementv1beta1.OverrideRule {
	return placementv1beta1.OverrideRule{ClusterSelector: sel, OverrideType: placementv1beta1.JSONPatchOverrideType, JSONPatchOverrides: ops}
}

func op(o placementv1beta1.JSONPatchOverrideOperator, path, v string) placementv1beta1.JSONPatchOverride {
	p := placementv1beta1.JSONPatchOverride{Operator: o, Path: path}
	if v != "" {
		p.Value = value(v)
	}
	return p
}

func cro(name string, rules ...placementv1beta1.OverrideRule) placementv1beta1.ClusterResourceOverrideSnapshot {
	s := placementv1beta1.ClusterResourceOverrideSnapshot{}
	s.Name, s.Labels = name+"-0", map[string]string{placementv1beta1.OverrideTrackingLabel: name}
	s.Spec.OverrideSpec = placementv1beta1.ClusterResourceOverrideSpec{
		ClusterResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: "app"}},
		Policy:                   &placementv1beta1.OverridePolicy{OverrideRules: rules},
	}
	return s
}

func ro(name string, rules ...placementv1beta1.OverrideRule) placementv1beta1.ResourceOverrideSnapshot {
	s := placementv1beta1.ResourceOverrideSnapshot{}
	s.Name, s.Namespace, s.Labels = name+"-0", "app", map[string]string{placementv1beta1.OverrideTrackingLabel: name}
	s.Spec.OverrideSpec = placementv1beta1.ResourceOverrideSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"}},
		Policy:            &placementv1beta1.OverridePolicy{OverrideRules: rules},
	}
	return s
}

func TestApply(t *testing.T) {
	prod := Cluster{Name: "member-1", Labels: map[string]string{"env": "prod", "region": "west"}}
	tests := []struct {
		name    string
		set     Set
		cluster Cluster
		want    map[string]any // paths (dot separated) to expected values; nil map means deleted
		wantErr string
	}{{
		name:    "variables are substituted",
		set:     Set{Namespaced: []placementv1beta1.ResourceOverrideSnapshot{ro("ro", patchRule(selectAll(), op("add", "/metadata/labels/cluster", `"${MEMBER-CLUSTER-NAME}-${MEMBER-CLUSTER-LABEL-KEY-region}"`)))}},
		cluster: prod,
		want:    map[string]any{"metadata.labels.cluster": "member-1-west", "metadata.labels.tier": "web"},
	}, {
		name: "a ResourceOverride wins over a ClusterResourceOverride",
		set: Set{
			Cluster:    []placementv1beta1.ClusterResourceOverrideSnapshot{cro("cro", patchRule(selectAll(), op("replace", "/spec/replicas", "3")))},
			Namespaced: []placementv1beta1.ResourceOverrideSnapshot{ro("ro", patchRule(selectAll(), op("replace", "/spec/replicas", "5")))},
		},
		cluster: prod,
		want:    map[string]any{"spec.replicas": float64(5)},
	}, {
		name:    "rules apply only to the clusters they select",
		set:     Set{Namespaced: []placementv1beta1.ResourceOverrideSnapshot{ro("ro", patchRule(selectLabels(map[string]string{"env": "test"}), op("replace", "/spec/replicas", "5")), patchRule(nil, op("replace", "/spec/replicas", "7")))}},
		cluster: prod,
		want:    map[string]any{"spec.replicas": float64(1)},
	}, {
		name:    "a Delete rule keeps the resource off the cluster",
		set:     Set{Cluster: []placementv1beta1.ClusterResourceOverrideSnapshot{cro("cro", placementv1beta1.OverrideRule{ClusterSelector: selectLabels(map[string]string{"env": "prod"}), OverrideType: placementv1beta1.DeleteOverrideType})}},
		cluster: prod,
	}, {
		name:    "a missing label is an error naming it",
		set:     Set{Namespaced: []placementv1beta1.ResourceOverrideSnapshot{ro("ro", patchRule(selectAll(), op("add", "/metadata/labels/zone", `"${MEMBER-CLUSTER-LABEL-KEY-zone}"`)))}},
		cluster: prod,
		wantErr: "ResourceOverride app/ro (snapshot ro-0) on apps/v1 Deployment app/web: overrideRules[0].jsonPatchOverrides[0] (add /metadata/labels/zone): member cluster member-1 has no label zone",
	}, {
		name:    "a patch to a missing path is an error naming the rule and path",
		set:     Set{Cluster: []placementv1beta1.ClusterResourceOverrideSnapshot{cro("cro", patchRule(selectAll(), op("replace", "/spec/template/spec/nodeName", `"x"`)))}},
		cluster: prod,
		wantErr: "ClusterResourceOverride cro (snapshot cro-0) on apps/v1 Deployment app/web: overrideRules[0].jsonPatchOverrides[0] (replace /spec/template/spec/nodeName)",
	}, {
		name:    "remove takes no value",
		set:     Set{Namespaced: []placementv1beta1.ResourceOverrideSnapshot{ro("ro", patchRule(selectAll(), op("remove", "/metadata/labels/tier", `"x"`)))}},
		cluster: prod,
		wantErr: "a remove operation takes no value",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.set.Apply([]byte(deploymentJSON), tc.cluster)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if out != nil {
					t.Fatalf("got %s, want the resource deleted", out)
				}
				return
			}
			var obj map[string]any
			if err := json.Unmarshal(out, &obj); err != nil {
				t.Fatal(err)
			}
			for path, want := range tc.want {
				var got any = obj
				for _, p := range strings.Split(path, ".") {
					got = got.(map[string]any)[p]
				}
				if got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
		})
	}
}

func TestForPlacementAndOn(t *testing.T) {
	web := placementv1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"}
	other := cro("other")
	other.Spec.OverrideSpec.ClusterResourceSelectors[0].Name = "elsewhere"
	rpOnly := ro("rp-only", patchRule(selectAll(), op("add", "/metadata/labels/a", `"b"`)))
	rpOnly.Spec.OverrideSpec.Placement = &placementv1beta1.PlacementRef{Name: "rp", Scope: placementv1beta1.NamespaceScoped}
	set := Set{
		Cluster: []placementv1beta1.ClusterResourceOverrideSnapshot{
			cro("prod", patchRule(selectLabels(map[string]string{"env": "prod"}), op("add", "/metadata/labels/a", `"b"`))),
			other,
		},
		Namespaced: []placementv1beta1.ResourceOverrideSnapshot{rpOnly, ro("all", patchRule(selectAll(), op("add", "/metadata/labels/a", `"b"`)))},
	}
	crp := set.ForPlacement(placements.Key{Name: "crp"}, []placementv1beta1.ResourceIdentifier{web})
	got := crp.On(map[string]string{"env": "prod"})
	if !got.Equal([]string{"prod-0"}, []placementv1beta1.NamespacedName{{Namespace: "app", Name: "all-0"}}) {
		t.Errorf("CRP on prod: %+v", got)
	}
	if got := crp.On(map[string]string{"env": "test"}); !got.Equal(nil, []placementv1beta1.NamespacedName{{Namespace: "app", Name: "all-0"}}) {
		t.Errorf("CRP on test: %+v", got)
	}
	rp := set.ForPlacement(placements.Key{Namespace: "app", Name: "rp"}, []placementv1beta1.ResourceIdentifier{web})
	if got := rp.On(nil); !got.Equal(nil, []placementv1beta1.NamespacedName{{Namespace: "app", Name: "all-0"}, {Namespace: "app", Name: "rp-only-0"}}) {
		t.Errorf("RP: %+v", got)
	}
	if m := set.ForPlacement(placements.Key{Name: "crp"}, nil); !m.Empty() {
		t.Errorf("a placement selecting nothing has overrides: %+v", m)
	}
}

func TestValidatePath(t *testing.T) {
	for path, allowed := range map[string]bool{
		"/spec/replicas":             true,
		"/metadata/labels":           true,
		"/metadata/labels/tier":      true,
		"/metadata/annotations/a~1b": true,
		"/metadata~1name":            true, // a top-level key "metadata/name", not metadata
		"spec":                       false,
		"/kind":                      false,
		"/Kind":                      false,
		"/KIND/x":                    false,
		"/apiVersion":                false,
		"/apiversion":                false,
		"/Status/phase":              false,
		"/metadata":                  false,
		"/metadata/name":             false,
		"/metadata/Namespace":        false,
		"/metadata/Labels":           false,
		"/Metadata/labels":           false,
		"/METADATA/annotations/x":    false,
	} {
		if err := ValidatePath(path); (err == nil) != allowed {
			t.Errorf("ValidatePath(%q) = %v, want allowed=%v", path, err, allowed)
		}
	}
}

// An override stored before the schema refused case variants of the
// identity keys is refused when it is applied.
func TestApplyRefusesIdentityPathsInAnyCase(t *testing.T) {
	set := Set{Cluster: []placementv1beta1.ClusterResourceOverrideSnapshot{
		cro("kind", patchRule(selectAll(), op(placementv1beta1.JSONPatchOverrideOpAdd, "/Kind", `"ConfigMap"`))),
	}}
	_, err := set.Apply([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`), Cluster{Name: "m1"})
	if err == nil || !strings.Contains(err.Error(), "path /Kind targets Kind, which an override cannot change") {
		t.Fatalf("Apply = %v", err)
	}
}
