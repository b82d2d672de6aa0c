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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
)

// Fleetplane: each resource is informed at one version that every CRD
// deciding it serves — the one informed already, then the one they all
// store, then the highest — while owner references of every served version
// still map to it.
func TestOneInformedVersionPerResource(t *testing.T) {
	version := func(name string, stored bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: stored}
	}
	crd := func(cluster, group, plural, kind string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Scope: apiextensionsv1.NamespaceScoped, Versions: versions,
		}}
		c.Name = plural + "." + group
		c.Annotations = map[string]string{"kcp.io/cluster": cluster}
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		return c
	}
	const fleet = "placement.kubernetes-fleet.io"
	indexer := cache.NewIndexer(kcpcache.MetaClusterNamespaceKeyFunc, cache.Indexers{byGroupVersionResourceIndex: byGroupVersionResourceIndexFunc})
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{
		crd("system:bound-crds", fleet, "works", "Work", version("v1beta1", true), version("v1", false), version("v1alpha1", false)),
		// A team's child workspace, which binds nothing, defining the
		// platform's resource at a higher version of its own: not informed,
		// or the collector would look every Work up at a version its
		// workspace does not serve.
		crd("team-child", fleet, "works", "Work", version("v2", true)),
		// Two teams' resource: one serves v1 only, the other v1 and v2
		// (storing v2). v1 is what both serve.
		crd("team-a", "example.com", "widgets", "Widget", version("v1", true)),
		crd("team-b", "example.com", "widgets", "Widget", version("v1", false), version("v2", true)),
		// The version they all store.
		crd("team-a", "example.com", "gadgets", "Gadget", version("v1beta1", false), version("v1", false), version("v2alpha1", true)),
		// Both versions served by both, stored by neither alike: the higher.
		crd("team-a", "example.com", "gizmos", "Gizmo", version("v1beta1", false), version("v1", true)),
		crd("team-b", "example.com", "gizmos", "Gizmo", version("v1beta1", true), version("v1", false)),
		// No version in common: every version, as kcp informs them.
		crd("team-a", "example.com", "sprockets", "Sprocket", version("v1", true)),
		crd("team-b", "example.com", "sprockets", "Sprocket", version("v2", true)),
	} {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	served := (&crdGVRSource{crdIndexer: indexer}).GVRs()
	versionsOf := func(informed map[schema.GroupVersionResource]GVRPartialMetadata) map[schema.GroupResource]sets.Set[string] {
		versions := map[schema.GroupResource]sets.Set[string]{}
		for gvr := range informed {
			if versions[gvr.GroupResource()] == nil {
				versions[gvr.GroupResource()] = sets.New[string]()
			}
			versions[gvr.GroupResource()].Insert(gvr.Version)
		}
		return versions
	}
	informed := informedVersions(served, nil)
	versions := versionsOf(informed)
	for gr, want := range map[schema.GroupResource][]string{
		{Group: fleet, Resource: "works"}:                   {"v1beta1"},
		{Group: "example.com", Resource: "widgets"}:         {"v1"},
		{Group: "example.com", Resource: "gadgets"}:         {"v2alpha1"},
		{Group: "example.com", Resource: "gizmos"}:          {"v1"},
		{Group: "example.com", Resource: "sprockets"}:       {"v1", "v2"},
		{Group: "", Resource: "configmaps"}:                 {"v1"},
		{Group: "core.kcp.io", Resource: "logicalclusters"}: {"v1alpha1"},
	} {
		if !versions[gr].Equal(sets.New(want...)) {
			t.Errorf("%s is informed at %v, want %v", gr, sets.List(versions[gr]), want)
		}
	}

	// A version informed already stays while every CRD still serves it.
	gizmos := schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "gizmos"}
	if got := versionsOf(informedVersions(served, map[schema.GroupVersionResource]GVRPartialMetadata{gizmos: served[gizmos]})); !got[gizmos.GroupResource()].Equal(sets.New("v1beta1")) {
		t.Errorf("gizmos informed at v1beta1 moves to %v", sets.List(got[gizmos.GroupResource()]))
	}

	data := discoveryDataFor(served, informed)
	for _, list := range data.apiResourceList {
		if list.GroupVersion == fleet+"/v1" || list.GroupVersion == fleet+"/v1alpha1" || list.GroupVersion == fleet+"/v2" {
			t.Errorf("discovery lists %s, which is not informed: the garbage collector would monitor it", list.GroupVersion)
		}
	}
	mapper := restmapper.NewDiscoveryRESTMapper(data.apiGroupResources)
	for _, v := range []string{"v1beta1", "v1", "v1alpha1"} {
		m, err := mapper.RESTMapping(schema.GroupKind{Group: fleet, Kind: "Work"}, v)
		if err != nil || m.Resource != (schema.GroupVersionResource{Group: fleet, Version: v, Resource: "works"}) {
			t.Errorf("an owner reference of Work %s maps to %v (%v)", v, m, err)
		}
	}
}
