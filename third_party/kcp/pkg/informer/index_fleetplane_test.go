/*
Copyright 2026 The Fleetplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package informer

import (
	"testing"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
)

// Fleetplane: a CRD whose names were refused serves nothing and maps nothing:
// it must not take a kind in the REST mapper every garbage collector shares.
func TestOnlyEstablishedCRDsAreIndexed(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group:    "placement.kubernetes-fleet.io",
		Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "hijacks", Kind: "ClusterResourcePlacement"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true}, {Name: "v1", Served: false}},
	}}
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse, Reason: "KindConflict"},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse},
	}
	if keys, err := byGroupVersionResourceIndexFunc(crd); err != nil || len(keys) != 0 {
		t.Errorf("a CRD not established is indexed as %v (%v)", keys, err)
	}
	crd.Status.Conditions[1].Status = apiextensionsv1.ConditionTrue
	keys, err := byGroupVersionResourceIndexFunc(crd)
	if err != nil || len(keys) != 1 || keys[0] != "placement.kubernetes-fleet.io/v1beta1/hijacks" {
		t.Errorf("an established CRD is indexed as %v (%v), want its served version only", keys, err)
	}
}

// Fleetplane: the platform's CRDs (bound from APIExports) decide a
// resource's kind; tenants' CRDs can neither change it, nor take a
// platform kind under another name; a resource only tenants define and
// disagree on is left out.
func TestTenantCRDsCannotTakeThePlatformsKinds(t *testing.T) {
	crd := func(cluster, group, plural, kind string) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    group,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Scope:    apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true}},
		}}
		c.Name = plural + "." + group
		c.Annotations = map[string]string{"kcp.io/cluster": cluster}
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		return c
	}
	const fleet = "placement.kubernetes-fleet.io"
	indexer := cache.NewIndexer(kcpcache.MetaClusterNamespaceKeyFunc, cache.Indexers{byGroupVersionResourceIndex: byGroupVersionResourceIndexFunc})
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{
		crd("system:bound-crds", fleet, "clusterresourceplacements", "ClusterResourcePlacement"),
		crd("system:bound-crds", fleet, "clusterresourcesnapshots", "ClusterResourceSnapshot"),
		// A team's child workspace, which binds nothing, reusing a resource
		// name under a placement kind, and a kind under another name.
		crd("team-child", fleet, "clusterresourcesnapshots", "ClusterResourcePlacement"),
		crd("team-child", fleet, "zclusterresourceplacements", "ClusterResourcePlacement"),
		// Two teams' own resource of one name, with two kinds.
		crd("team-a", "example.com", "widgets", "Widget"),
		crd("team-b", "example.com", "widgets", "Gadget"),
		crd("team-a", "example.com", "gizmos", "Gizmo"),
	} {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	gvrs := (&crdGVRSource{crdIndexer: indexer}).GVRs()
	for resource, kind := range map[string]string{"clusterresourceplacements": "ClusterResourcePlacement", "clusterresourcesnapshots": "ClusterResourceSnapshot"} {
		if got := gvrs[gvrFor(fleet, "v1beta1", resource)]; got.Names.Kind != kind {
			t.Errorf("%s: %+v, want kind %s", resource, got, kind)
		}
	}
	for _, left := range []schema.GroupVersionResource{gvrFor(fleet, "v1beta1", "zclusterresourceplacements"), gvrFor("example.com", "v1beta1", "widgets")} {
		if got, ok := gvrs[left]; ok {
			t.Errorf("%s is discovered as %+v, want it left out", left, got)
		}
	}
	if got := gvrs[gvrFor("example.com", "v1beta1", "gizmos")]; got.Names.Kind != "Gizmo" {
		t.Errorf("a tenant's resource nobody disputes: %+v", got)
	}
	if _, ok := gvrs[gvrFor("", "v1", "configmaps")]; !ok {
		t.Error("built-in resources are missing")
	}
	mapper := restmapper.NewDiscoveryRESTMapper(gvrsToDiscoveryData(gvrs).apiGroupResources)
	m, err := mapper.RESTMapping(schema.GroupKind{Group: fleet, Kind: "ClusterResourcePlacement"}, "v1beta1")
	if err != nil || m.Resource.Resource != "clusterresourceplacements" {
		t.Errorf("ClusterResourcePlacement maps to %v (%v)", m, err)
	}
}
