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

// Fleetplane: each resource is informed at one version — the one its CRDs
// all serve and store — while owner references of every served version
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
		// Two teams' resource: one serves v1 only, the other v1 and v2
		// (storing v2). v1 is what both serve.
		crd("team-a", "example.com", "widgets", "Widget", version("v1", true)),
		crd("team-b", "example.com", "widgets", "Widget", version("v1", false), version("v2", true)),
		// Nothing to choose between but the version order.
		crd("team-a", "example.com", "gadgets", "Gadget", version("v1beta1", false), version("v1", false), version("v2alpha1", true)),
	} {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	served := (&crdGVRSource{crdIndexer: indexer}).GVRs()
	informed := informedVersions(served)

	want := map[schema.GroupResource]string{
		{Group: fleet, Resource: "works"}:                   "v1beta1",
		{Group: "example.com", Resource: "widgets"}:         "v1",
		{Group: "example.com", Resource: "gadgets"}:         "v2alpha1",
		{Group: "", Resource: "configmaps"}:                 "v1",
		{Group: "core.kcp.io", Resource: "logicalclusters"}: "v1alpha1",
	}
	versions := map[schema.GroupResource][]string{}
	for gvr := range informed {
		versions[gvr.GroupResource()] = append(versions[gvr.GroupResource()], gvr.Version)
	}
	for gr, v := range want {
		if got := versions[gr]; len(got) != 1 || got[0] != v {
			t.Errorf("%s is informed at %v, want %s only", gr, got, v)
		}
	}
	if len(informed) != len(versions) {
		t.Errorf("%d resources informed at %d versions", len(versions), len(informed))
	}

	data := discoveryDataFor(served, informed)
	for _, list := range data.apiResourceList {
		if list.GroupVersion == fleet+"/v1" || list.GroupVersion == fleet+"/v1alpha1" {
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
