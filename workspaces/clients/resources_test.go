package clients

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNamespacedResourcesAreKeptAndShared(t *testing.T) {
	readOnly := metav1.APIResource{Name: "leases", Kind: "Lease", Namespaced: true, Verbs: metav1.Verbs{"get"}}
	lists := func() []*metav1.APIResourceList {
		return []*metav1.APIResourceList{
			resourceList("v1", configMaps, namespaces, metav1.APIResource{Name: "configmaps/status", Kind: "ConfigMap", Namespaced: true}),
			resourceList("example.com/v1", widgets),
			{GroupVersion: "coordination.k8s.io/v1", APIResources: []metav1.APIResource{readOnly}},
		}
	}
	da := served(lists()...)
	a := &Workspace{Discovery: da}
	b := &Workspace{Discovery: served(lists()...)}

	got, err := a.NamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	want := []Resource{
		{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap"},
		{GroupVersionResource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Kind: "Widget"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := b.NamespacedResources(); err != nil {
		t.Fatal(err)
	}
	if a.namespaced != b.namespaced {
		t.Error("two workspaces serving the same kinds keep two copies")
	}

	discovered := discoveries(da)
	if again, _ := a.NamespacedResources(); !slices.Equal(again, want) || discoveries(da) != discovered {
		t.Errorf("second call: %v after %d discoveries, want the kept %v without discovering", again, discoveries(da)-discovered, want)
	}
	da.Resources = append(da.Resources, resourceList("example.com/v2", gadgets, metav1.APIResource{Name: "sprockets", Kind: "Sprocket", Namespaced: true}))
	a.forgetResources()
	got, _ = a.NamespacedResources()
	if len(got) != 3 || got[1].Resource != "sprockets" {
		t.Errorf("after the workspace's APIs changed: %v", got)
	}
}
