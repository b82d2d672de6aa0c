package clients

import (
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/restmapper"

	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
)

// placementGroup maps the placement API group as Fleetplane serves it, for
// every workspace: the same in all of them, so it is not discovered in each,
// and what the hub writes there does not depend on what a team defines in its
// workspace. (kcp refuses a team's CRD that reuses a bound kind — the e2e
// suite checks that —; this mapper would not follow one either.)
var placementGroup = sync.OnceValues(func() (*groupMapper, error) {
	schemas, err := fleetconfig.Schemas(fleetconfig.PlacementExport)
	if err != nil {
		return nil, err
	}
	found := &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: fleetconfig.PlacementExport},
		VersionedResources: map[string][]metav1.APIResource{}}
	for _, s := range schemas {
		if s.Spec.Group != found.Group.Name {
			return nil, fmt.Errorf("APIResourceSchema %s of export %s is in group %q", s.Name, fleetconfig.PlacementExport, s.Spec.Group)
		}
		for _, v := range s.Spec.Versions {
			if !v.Served {
				continue
			}
			found.VersionedResources[v.Name] = append(found.VersionedResources[v.Name], metav1.APIResource{
				Name: s.Spec.Names.Plural, SingularName: s.Spec.Names.Singular, Kind: s.Spec.Names.Kind,
				Namespaced: s.Spec.Scope == "Namespaced"})
		}
	}
	// Versions in the order discovery lists them: by Kubernetes' version
	// priority, the first preferred.
	for v := range found.VersionedResources {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: found.Group.Name + "/" + v, Version: v}
		found.Group.Versions = append(found.Group.Versions, gv)
	}
	if len(found.Group.Versions) == 0 {
		return nil, fmt.Errorf("export %s serves no versions", fleetconfig.PlacementExport)
	}
	slices.SortFunc(found.Group.Versions, func(a, b metav1.GroupVersionForDiscovery) int {
		return -version.CompareKubeAwareVersionStrings(a.Version, b.Version)
	})
	found.Group.PreferredVersion = found.Group.Versions[0]
	return &groupMapper{restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{found})}, nil
})
