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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
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
// The version kept is the one served by the most CRDs defining the
// resource (tenants' CRDs in different workspaces may serve different
// versions), then the one they all store, then the highest in Kubernetes'
// version order.
func informedVersions(served map[schema.GroupVersionResource]GVRPartialMetadata) map[schema.GroupVersionResource]GVRPartialMetadata {
	chosen := make(map[schema.GroupResource]schema.GroupVersionResource, len(served))
	for gvr, metadata := range served {
		gr := gvr.GroupResource()
		if current, ok := chosen[gr]; !ok || preferredVersion(gvr, metadata, current, served[current]) {
			chosen[gr] = gvr
		}
	}
	informed := make(map[schema.GroupVersionResource]GVRPartialMetadata, len(chosen))
	for _, gvr := range chosen {
		informed[gvr] = served[gvr]
	}
	return informed
}

func preferredVersion(a schema.GroupVersionResource, am GVRPartialMetadata, b schema.GroupVersionResource, bm GVRPartialMetadata) bool {
	if am.servers != bm.servers {
		return am.servers > bm.servers
	}
	if am.stored != bm.stored {
		return am.stored
	}
	return version.CompareKubeAwareVersionStrings(a.Version, b.Version) > 0
}

// Fleetplane: allStore says whether every one of crds stores its objects at
// version.
func allStore(crds []*apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, crd := range crds {
		if !storesAt(crd, version) {
			return false
		}
	}
	return true
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
	if len(a) != len(b) {
		return false
	}
	for gvr := range a {
		if _, ok := b[gvr]; !ok {
			return false
		}
	}
	return true
}
