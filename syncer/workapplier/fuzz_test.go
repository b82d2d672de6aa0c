package workapplier

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// FuzzDecode feeds arbitrary manifests to the syncer: every manifest gets
// an outcome (an object to apply or a failure), and none panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"p-"}}`), []byte(`not json`))
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":7}}`), []byte(`[]`))
	f.Add([]byte(`{"apiVersion":"/","kind":"X","metadata":{"name":"a","namespace":{"x":1}}}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		work := &placementv1beta1.Work{}
		for _, raw := range [][]byte{a, b} {
			work.Spec.Workload.Manifests = append(work.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
		}
		ms := decode(work)
		if len(ms) != 2 {
			t.Fatalf("%d outcomes for 2 manifests", len(ms))
		}
		for i, m := range ms {
			if (m.obj == nil) == (m.applied.reason == "") {
				t.Fatalf("manifest %d: object %v and failure %q: exactly one is expected", i, m.obj != nil, m.applied.reason)
			}
		}
	})
}
