package diff

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestForReportHidesSecretValues(t *testing.T) {
	hub := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"password": "aHVi"}, "type": "Opaque"}}
	member := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"password": "bWVtYmVy", "extra": "eA=="}, "type": "kubernetes.io/tls"}}
	got := ForReport(hub, Compare(hub, member, true))
	want := []Detail{
		{Path: "/data/extra", InMember: redacted, MemberOnly: true},
		{Path: "/data/password", InHub: redacted, InMember: redacted},
		{Path: "/type", InHub: "Opaque", InMember: "kubernetes.io/tls"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("detail %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestCompareNormalizes(t *testing.T) {
	obj := func(cpu any, port any, annotations map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "annotations": annotations},
			"spec":     map[string]any{"cpu": cpu, "port": port, "name": "web"}}}
	}
	hub := obj("0.5", float64(80), map[string]any{"team": "a"})
	member := obj("500m", int64(80), map[string]any{"team": "a", "fleetplane.io/owner": "x", "kubernetes-fleet.io/hash": "y"})
	for _, full := range []bool{false, true} {
		if ds := Compare(hub, member, full); len(ds) != 0 {
			t.Errorf("full=%v: equal quantities, numbers and the fleet's own annotations differ: %+v", full, ds)
		}
	}
	if ds := Compare(hub, obj("1", float64(80), nil), false); len(ds) != 2 {
		t.Errorf("a different quantity and a missing annotation: %+v", ds)
	}
}

// A label added on the member is drift under full comparison only, marked
// as the member's alone (applying the manifest does not remove it).
func TestFullComparisonReportsMemberOnlyLabels(t *testing.T) {
	hub := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app"}}}
	member := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app",
		"labels": map[string]any{"added-by": "hand", "kubernetes.io/metadata.name": "app"}, "uid": "u", "resourceVersion": "7"},
		"spec": map[string]any{"finalizers": []any{"kubernetes"}}, "status": map[string]any{"phase": "Active"}}}
	if ds := Compare(hub, member, false); len(ds) != 0 {
		t.Errorf("partial comparison: %+v, want nothing", ds)
	}
	want := []Detail{
		{Path: "/metadata/labels/added-by", InMember: "hand", MemberOnly: true},
		{Path: "/spec", InMember: "map[finalizers:[kubernetes]]", MemberOnly: true},
	}
	got := Compare(hub, member, true)
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("full comparison: %+v, want %+v", got, want)
	}
}
