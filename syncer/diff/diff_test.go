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
		{Path: "/data/extra", InMember: redacted},
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
