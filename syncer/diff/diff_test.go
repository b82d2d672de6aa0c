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
