package workapplier

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Manifests that cannot decode, use generateName or repeat another fail for
// good: only a change of the Work, which starts a new round, can fix them,
// so they are not retried; a manifest that failed to apply is.
func TestCountRetriableLeavesOutWhatOnlyAWorkChangeFixes(t *testing.T) {
	work := &placementv1beta1.Work{}
	for _, raw := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`,
		`not json`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"a-","namespace":"n"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"n"}}`,
	} {
		work.Spec.Workload.Manifests = append(work.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}})
	}
	ms := decode(work)
	for _, i := range []int{1, 2, 3} {
		if ms[i].obj != nil || ms[i].applied.reason == "" {
			t.Fatalf("manifest %d should have failed to decode: %+v", i, ms[i].applied)
		}
		// The status the hub validates needs both conditions complete.
		if ms[i].avail.status == "" || ms[i].avail.reason == "" {
			t.Errorf("manifest %d has no availability to report: %+v", i, ms[i].avail)
		}
	}
	ms[0].applied.ok, ms[4].applied.ok = true, true
	if n := countFailed(ms, true); n != 0 {
		t.Errorf("with the decodable manifests applied, %d to retry; want 0", n)
	}
	ms[4].fail(placementv1beta1.ApplyResultFailedToApply, "the API server is down")
	if n := countFailed(ms, true); n != 1 {
		t.Errorf("with one manifest failing to apply, %d to retry; want 1", n)
	}
}
