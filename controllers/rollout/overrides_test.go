package rollout

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestPlacedResources(t *testing.T) {
	s := &placementv1beta1.ClusterResourceSnapshot{}
	s.Name = "p-0-snapshot"
	for _, raw := range []string{
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`,
		`{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"e","namespace":"app"},"data":{
			"r":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"reader"}}}}`,
		// Malformed: left to the work generator, which reports it.
		`{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"bad","namespace":"app"},"data":{
			"c":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"other"}}}}`,
	} {
		s.Spec.SelectedResources = append(s.Spec.SelectedResources, placementv1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: []byte(raw)}})
	}
	ids, err := placedResources([]placementv1beta1.ResourceSnapshotObj{s})
	if err != nil {
		t.Fatal(err)
	}
	want := []placementv1beta1.ResourceIdentifier{
		{Version: "v1", Kind: "Namespace", Name: "app"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Namespace: "app", Name: "reader"},
		{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: "ResourceEnvelope", Namespace: "app", Name: "bad"},
	}
	if len(ids) != len(want) {
		t.Fatalf("ids = %+v, want %+v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Errorf("id %d = %+v, want %+v", i, ids[i], want[i])
		}
	}
}
