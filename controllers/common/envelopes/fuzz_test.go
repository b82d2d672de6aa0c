package envelopes

import (
	"encoding/json"
	"testing"
)

// FuzzOpen opens arbitrary resources: no panic, and every object an
// envelope yields is a JSON object.
func FuzzOpen(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"e","namespace":"n"},"data":{"a.yaml":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","namespace":"n","annotations":{"kubernetes-fleet.io/envelope-configmap":"true"}},"data":{"a.yaml":"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"}}`))
	f.Add([]byte(`{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourceEnvelope","metadata":{"name":"e"},"data":{"x":"not an object"}}`))
	f.Add([]byte(`{"kind":"ConfigMap"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		env, err := Open(raw)
		if err != nil || env == nil {
			return
		}
		for i, o := range env.Objects {
			var obj map[string]any
			if err := json.Unmarshal(o, &obj); err != nil {
				t.Fatalf("object %d of envelope %s is not a JSON object: %v\n%s", i, env.ID.Name, err, o)
			}
		}
	})
}
