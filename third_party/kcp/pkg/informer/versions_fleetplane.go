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
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-dev/logicalcluster/v3"

	"github.com/kcp-dev/kcp/pkg/indexers"
)

// Fleetplane: informedVersions keeps one version of each resource. The
// informers list and watch the metadata of objects across workspaces,
// which is the same whichever version is asked for, so an informer per
// served version held every object once per version (the placement APIs
// serve v1beta1, v1 and some v1alpha1) and handed each event to every
// handler once per version. The garbage collector, watching every version,
// knew each owner under the version it observed first; an owner reference
// written with another one (the controllers write v1beta1, discovery
// prefers v1) did not match, and the collector verified such dependents
// with reads of the dependent and of its owner — a placement and all its
// status — as they were created.
//
// The collector reads, patches and deletes an object at the version it
// knows it under, in the object's workspace, so that version must be served
// by every CRD that decides the resource (the platform's, if it has any: a
// tenant cannot move the platform's resources to a version of its own).
// Of those versions, the one informed already is kept (switching drops one
// informer for another, and handlers join the new one late), then the one
// they all store, then the highest in Kubernetes' version order. A resource
// whose CRDs share no version is informed at all of them, as kcp does.
func informedVersions(served, previous map[schema.GroupVersionResource]GVRPartialMetadata) map[schema.GroupVersionResource]GVRPartialMetadata {
	byResource := map[schema.GroupResource][]schema.GroupVersionResource{}
	for gvr := range served {
		byResource[gvr.GroupResource()] = append(byResource[gvr.GroupResource()], gvr)
	}
	informed := make(map[schema.GroupVersionResource]GVRPartialMetadata, len(byResource))
	for _, versions := range byResource {
		for _, gvr := range versionsToInform(versions, served, previous) {
			informed[gvr] = served[gvr]
		}
	}
	return informed
}

func versionsToInform(versions []schema.GroupVersionResource, served, previous map[schema.GroupVersionResource]GVRPartialMetadata) []schema.GroupVersionResource {
	var best schema.GroupVersionResource
	found := false
	for _, gvr := range versions {
		if served[gvr].servedByAll && (!found || preferredVersion(gvr, best, served, previous)) {
			best, found = gvr, true
		}
	}
	if !found {
		return versions
	}
	return []schema.GroupVersionResource{best}
}

func preferredVersion(a, b schema.GroupVersionResource, served, previous map[schema.GroupVersionResource]GVRPartialMetadata) bool {
	_, aBefore := previous[a]
	_, bBefore := previous[b]
	if aBefore != bBefore {
		return aBefore
	}
	if served[a].stored != served[b].stored {
		return served[a].stored
	}
	return version.CompareKubeAwareVersionStrings(a.Version, b.Version) > 0
}

// Fleetplane: resourceDefiners returns, for each resource, the CRDs
// (cluster|name) whose versions decide which one is informed: the
// platform's if the resource has any, else all that define it.
func resourceDefiners(indexer cache.Indexer, keys []string) map[schema.GroupResource]sets.Set[string] {
	all := map[schema.GroupResource]sets.Set[string]{}
	platform := map[schema.GroupResource]sets.Set[string]{}
	for _, key := range keys {
		parts := strings.Split(key, "/")
		gr := schema.GroupResource{Group: parts[0], Resource: parts[2]}
		crds, err := indexers.ByIndex[*apiextensionsv1.CustomResourceDefinition](indexer, byGroupVersionResourceIndex, key)
		if err != nil {
			utilruntime.HandleError(err)
			continue
		}
		for _, crd := range crds {
			id := crdID(crd)
			insert(all, gr, id)
			if platformCRDClusters[logicalcluster.From(crd)] {
				insert(platform, gr, id)
			}
		}
	}
	for gr, crds := range platform {
		all[gr] = crds
	}
	return all
}

func insert(m map[schema.GroupResource]sets.Set[string], gr schema.GroupResource, id string) {
	if m[gr] == nil {
		m[gr] = sets.New[string]()
	}
	m[gr].Insert(id)
}

func crdID(crd *apiextensionsv1.CustomResourceDefinition) string {
	return logicalcluster.From(crd).String() + "|" + crd.Name
}

// Fleetplane: versionOfAll says whether every one of definers is among the
// CRDs serving version, and whether they all store it.
func versionOfAll(serving []*apiextensionsv1.CustomResourceDefinition, definers sets.Set[string], version string) (servedByAll, stored bool) {
	servers, stored := 0, true
	for _, crd := range serving {
		if definers.Has(crdID(crd)) {
			servers++
			stored = stored && storesAt(crd, version)
		}
	}
	return servers > 0 && servers == definers.Len(), stored
}

func storesAt(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Storage
		}
	}
	return false
}

// Fleetplane: discoveryDataFor lists the informed resources — what the
// garbage collector and the quota controller monitor — and maps every
// served version, so that an owner reference of any version finds its
// resource.
func discoveryDataFor(served, informed map[schema.GroupVersionResource]GVRPartialMetadata) discoveryData {
	return discoveryData{
		apiGroupResources: gvrsToDiscoveryData(served).apiGroupResources,
		apiResourceList:   gvrsToDiscoveryData(informed).apiResourceList,
	}
}

// Fleetplane: sameResources says whether a and b hold the same resources.
func sameResources(a, b map[schema.GroupVersionResource]GVRPartialMetadata) bool {
	return sets.KeySet(a).Equal(sets.KeySet(b))
}
