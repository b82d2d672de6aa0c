package clients

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func served(lists ...*metav1.APIResourceList) *fakediscovery.FakeDiscovery {
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
}

func resourceList(gv string, resources ...metav1.APIResource) *metav1.APIResourceList {
	for i := range resources {
		resources[i].Verbs = metav1.Verbs{"get", "list", "watch", "create"}
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: resources}
}

var (
	configMaps = metav1.APIResource{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true}
	namespaces = metav1.APIResource{Name: "namespaces", SingularName: "namespace", Kind: "Namespace"}
	widgets    = metav1.APIResource{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: true}
	gadgets    = metav1.APIResource{Name: "gadgets", SingularName: "gadget", Kind: "Gadget"}
)

func discoveries(d *fakediscovery.FakeDiscovery) int {
	n := 0
	for _, a := range d.Actions() {
		if a.GetResource().Resource == "group" {
			n++
		}
	}
	return n
}

func TestLazyMapperMapsAndDiscoversOnlyTheGroupAsked(t *testing.T) {
	d := served(resourceList("v1", configMaps, namespaces), resourceList("example.com/v1", widgets))
	m := NewLazyMapper(d)

	mapping, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if mapping.Resource.Resource != "configmaps" || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Errorf("ConfigMap mapped to %v, scope %s", mapping.Resource, mapping.Scope.Name())
	}
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "Namespace"}); err != nil {
		t.Fatal(err)
	}
	if n := discoveries(d); n != 1 {
		t.Errorf("two core kinds discovered the core group %d times, want once", n)
	}
	lm := m.(*lazyMapper)
	if _, ok := lm.groups["example.com"]; ok {
		t.Error("a group nobody asked about was discovered")
	}
	kind, err := m.KindFor(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
	if err != nil || kind.Kind != "Widget" {
		t.Errorf("widgets: %v, %v", kind, err)
	}
}

func TestLazyMapperFindsAKindAddedLater(t *testing.T) {
	d := served(resourceList("example.com/v1", widgets))
	m := NewLazyMapper(d)
	if _, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}); err != nil {
		t.Fatal(err)
	}
	d.Resources = []*metav1.APIResourceList{resourceList("example.com/v1", widgets, gadgets)}
	mapping, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Gadget"})
	if err != nil {
		t.Fatal(err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameRoot {
		t.Errorf("Gadget is cluster-scoped, mapped as %s", mapping.Scope.Name())
	}
}

func TestLazyMapperUnknownKindsAreNoMatch(t *testing.T) {
	d := served(resourceList("v1", configMaps))
	m := NewLazyMapper(d)
	for _, gk := range []schema.GroupKind{{Kind: "Secret"}, {Group: "nowhere.example.com", Kind: "Thing"}} {
		before := discoveries(d)
		if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
			t.Errorf("%v: want a no-match error, got %v", gk, err)
		}
		if n := discoveries(d) - before; n != 1 {
			t.Errorf("%v: discovered %d times, want once", gk, n)
		}
	}
}

func TestLazyMappersShareEqualGroupsAndResetForgets(t *testing.T) {
	a := NewLazyMapper(served(resourceList("v1", configMaps))).(*lazyMapper)
	b := NewLazyMapper(served(resourceList("v1", configMaps))).(*lazyMapper)
	c := NewLazyMapper(served(resourceList("v1", configMaps, namespaces))).(*lazyMapper)
	for _, m := range []*lazyMapper{a, b, c} {
		if _, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
			t.Fatal(err)
		}
	}
	if a.groups[""] != b.groups[""] {
		t.Error("workspaces serving the same core group hold two mappers of it")
	}
	if a.groups[""] == c.groups[""] {
		t.Error("workspaces serving different core groups share a mapper")
	}
	a.Reset()
	if len(a.groups) != 0 {
		t.Error("Reset kept what was discovered")
	}
}

func TestLazyMappersShareAGroupListedInAnotherOrder(t *testing.T) {
	shortNamed := configMaps
	shortNamed.ShortNames = []string{"cm"}
	a := NewLazyMapper(served(resourceList("v1", configMaps, namespaces))).(*lazyMapper)
	b := NewLazyMapper(served(resourceList("v1", namespaces, shortNamed))).(*lazyMapper)
	for _, m := range []*lazyMapper{a, b} {
		if _, err := m.RESTMapping(schema.GroupKind{Kind: "Namespace"}); err != nil {
			t.Fatal(err)
		}
	}
	if a.groups[""] != b.groups[""] {
		t.Error("a group served alike but listed in another order, with other short names, is mapped twice")
	}
}

func TestLazyMapperKeepsNeitherUnservedGroupsNorWhatAResetOvertook(t *testing.T) {
	m := NewLazyMapper(served(resourceList("v1", configMaps))).(*lazyMapper)
	if _, err := m.RESTMapping(schema.GroupKind{Group: "nowhere.example.com", Kind: "Thing"}); !meta.IsNoMatchError(err) {
		t.Fatalf("want a no-match error, got %v", err)
	}
	if _, ok := m.groups["nowhere.example.com"]; ok {
		t.Error("a group the workspace does not serve was kept")
	}

	d := &resettingDiscovery{FakeDiscovery: served(resourceList("v1", configMaps))}
	m = NewLazyMapper(d).(*lazyMapper)
	d.reset = m.Reset
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
		t.Fatal(err)
	}
	if len(m.groups) != 0 {
		t.Error("a discovery that began before a Reset was kept after it")
	}
}

// resettingDiscovery resets a mapper while it discovers, the first time.
type resettingDiscovery struct {
	*fakediscovery.FakeDiscovery
	reset func()
}

func (d *resettingDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	if d.reset != nil {
		d.reset()
		d.reset = nil
	}
	return d.FakeDiscovery.ServerGroups()
}

func TestLazyMapperDiscoversAGroupOnceForConcurrentAsks(t *testing.T) {
	d := &slowDiscovery{FakeDiscovery: served(resourceList("v1", configMaps))}
	m := NewLazyMapper(d)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := d.groupReads.Load(); n != 1 {
		t.Errorf("8 concurrent asks discovered the group %d times, want once", n)
	}
}

// slowDiscovery takes a while to list groups, and counts the lists.
type slowDiscovery struct {
	*fakediscovery.FakeDiscovery
	groupReads atomic.Int32
}

func (d *slowDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	d.groupReads.Add(1)
	time.Sleep(50 * time.Millisecond)
	return d.FakeDiscovery.ServerGroups()
}

// A team's own CRD in the placement group, with a placement kind under
// another plural, must not change where the hub reads and writes that kind.
func TestLazyMapperMapsThePlacementGroupAsFleetplaneServesIt(t *testing.T) {
	hijack := metav1.APIResource{Name: "hijacks", SingularName: "hijack", Kind: "ClusterResourcePlacement", Namespaced: true}
	d := served(resourceList("placement.kubernetes-fleet.io/v1beta1", hijack))
	m := NewLazyMapper(d)

	for kind, want := range map[string]struct {
		resource   string
		namespaced bool
	}{
		"ClusterResourcePlacement": {"clusterresourceplacements", false},
		"ResourcePlacement":        {"resourceplacements", true},
		"ResourceOverride":         {"resourceoverrides", true},
	} {
		mapping, err := m.RESTMapping(schema.GroupKind{Group: "placement.kubernetes-fleet.io", Kind: kind}, "v1beta1")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
		if mapping.Resource.Resource != want.resource || namespaced != want.namespaced {
			t.Errorf("%s mapped to %v (namespaced %t), want %s (namespaced %t)", kind, mapping.Resource, namespaced, want.resource, want.namespaced)
		}
	}
	if _, err := m.KindFor(schema.GroupVersionResource{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Resource: "hijacks"}); !meta.IsNoMatchError(err) {
		t.Errorf("the team's plural in the placement group: %v, want no match", err)
	}
	preferred, err := m.RESTMapping(schema.GroupKind{Group: "placement.kubernetes-fleet.io", Kind: "Work"})
	if err != nil || preferred.Resource.Version != "v1" {
		t.Errorf("Work in the preferred version: %v, %v; want v1", preferred, err)
	}
	if n := discoveries(d); n != 0 {
		t.Errorf("the placement group was discovered %d times", n)
	}
	if singular, err := m.ResourceSingularizer("resourceplacements"); err != nil || singular != "resourceplacement" {
		t.Errorf("singular of resourceplacements: %q, %v", singular, err)
	}
}
