package overrides

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// FuzzApply renders arbitrary manifests through a ClusterResourceOverride
// with an arbitrary operation: it must never panic, and what it renders
// must still be a JSON object.
func FuzzApply(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"},"data":{"k":"v"}}`), "replace", "/data/k", []byte(`"${MEMBER-CLUSTER-NAME}"`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"a":"b"}}}`), "add", "/metadata/labels/x", []byte(`"${MEMBER-CLUSTER-LABEL-KEY-env}"`))
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","namespace":"n"},"spec":{"replicas":1}}`), "remove", "/spec/replicas", []byte(nil))
	f.Add([]byte(`{"kind":"ConfigMap"}`), "add", "/a~1b/-", []byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, raw []byte, op, path string, value []byte) {
		id, err := Identify(raw)
		if err != nil {
			return
		}
		patch := placementv1beta1.JSONPatchOverride{Operator: placementv1beta1.JSONPatchOverrideOperator(op), Path: path}
		if len(value) > 0 {
			patch.Value = apiextensionsv1.JSON{Raw: value}
		}
		snap := placementv1beta1.ClusterResourceOverrideSnapshot{}
		snap.Spec.OverrideSpec.ClusterResourceSelectors = []placementv1beta1.ResourceSelectorTerm{{Group: id.Group, Version: id.Version, Kind: id.Kind, Name: id.Name}}
		snap.Spec.OverrideSpec.Policy = &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
			ClusterSelector: &placementv1beta1.ClusterSelector{}, OverrideType: placementv1beta1.JSONPatchOverrideType,
			JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{patch},
		}}}
		out, err := Set{Cluster: []placementv1beta1.ClusterResourceOverrideSnapshot{snap}}.Apply(raw, Cluster{Name: "member-1", Labels: map[string]string{"env": "prod"}})
		if err != nil || out == nil {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("the rendered manifest is not a JSON object: %v\n%s", err, out)
		}
	})
}
