package clients

import (
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// lazyMapper maps the kinds of one workspace from the discovery of only the
// API groups asked about, and starts over on Reset (the workspace's APIs
// changed). A mapper of every API a workspace serves, built from its whole
// discovery, held ~250 KB for each of hundreds of team workspaces, most of
// which place namespaces and core kinds only; and a group discovers the same
// in most workspaces (the core kinds, Fleetplane's own APIs), so workspaces
// whose group is the same share one mapper of it (groupMappers).
type lazyMapper struct {
	discovery discovery.DiscoveryInterface

	mu     sync.RWMutex
	groups map[string]*groupMapper
}

var _ meta.ResettableRESTMapper = &lazyMapper{}

// NewLazyMapper maps kinds from what d discovers, one API group at a time.
func NewLazyMapper(d discovery.DiscoveryInterface) meta.ResettableRESTMapper {
	return &lazyMapper{discovery: d, groups: map[string]*groupMapper{}}
}

// Reset forgets what was discovered; the next mapping discovers again.
func (m *lazyMapper) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups = map[string]*groupMapper{}
}

// group returns the mapper of an API group, discovering the group if it is
// not known yet or again is set (a kind was not found in what is known);
// fresh tells that it was discovered now.
func (m *lazyMapper) group(name string, again bool) (g *groupMapper, fresh bool, err error) {
	if !again {
		m.mu.RLock()
		g, ok := m.groups[name]
		m.mu.RUnlock()
		if ok {
			return g, false, nil
		}
	}
	if g, err = discoverGroup(m.discovery, name); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups[name] = g
	return g, true, nil
}

// inGroup answers from the mapper of group; when the answer is that no such
// kind or resource is known, it discovers the group again (its CRDs may have
// changed) unless it was discovered just now.
func inGroup[T any](m *lazyMapper, group string, answer func(meta.RESTMapper) (T, error)) (T, error) {
	var zero T
	g, fresh, err := m.group(group, false)
	if err != nil {
		return zero, err
	}
	v, err := answer(g)
	if fresh || !meta.IsNoMatchError(err) {
		return v, err
	}
	if g, _, err = m.group(group, true); err != nil {
		return zero, err
	}
	return answer(g)
}

func (m *lazyMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return inGroup(m, resource.Group, func(g meta.RESTMapper) (schema.GroupVersionKind, error) { return g.KindFor(resource) })
}

func (m *lazyMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return inGroup(m, resource.Group, func(g meta.RESTMapper) ([]schema.GroupVersionKind, error) { return g.KindsFor(resource) })
}

func (m *lazyMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return inGroup(m, input.Group, func(g meta.RESTMapper) (schema.GroupVersionResource, error) { return g.ResourceFor(input) })
}

func (m *lazyMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return inGroup(m, input.Group, func(g meta.RESTMapper) ([]schema.GroupVersionResource, error) { return g.ResourcesFor(input) })
}

func (m *lazyMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return inGroup(m, gk.Group, func(g meta.RESTMapper) (*meta.RESTMapping, error) { return g.RESTMapping(gk, versions...) })
}

func (m *lazyMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return inGroup(m, gk.Group, func(g meta.RESTMapper) ([]*meta.RESTMapping, error) { return g.RESTMappings(gk, versions...) })
}

// ResourceSingularizer names no group: it answers from the groups known.
func (m *lazyMapper) ResourceSingularizer(resource string) (string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, g := range m.groups {
		if singular, err := g.ResourceSingularizer(resource); err == nil {
			return singular, nil
		}
	}
	return "", &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: resource}}
}

// groupMapper maps the kinds of one API group as some workspace serves it.
type groupMapper struct{ meta.RESTMapper }

// groupMappers holds the group mappers in use, by what their group
// discovered, so that workspaces serving a group alike share its mapper.
// A mapper no workspace holds any more is collected and its entry removed.
var groupMappers = struct {
	sync.Mutex
	byDiscovery map[string]weak.Pointer[groupMapper]
}{byDiscovery: map[string]weak.Pointer[groupMapper]{}}

// discoverGroup discovers every version of an API group and returns its
// mapper; a group the workspace does not serve maps nothing.
func discoverGroup(d discovery.DiscoveryInterface, name string) (*groupMapper, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, err
	}
	found := &restmapper.APIGroupResources{VersionedResources: map[string][]metav1.APIResource{}}
	for _, g := range groups.Groups {
		if g.Name == name {
			found.Group = g
		}
	}
	for _, v := range found.Group.Versions {
		list, err := d.ServerResourcesForGroupVersion(v.GroupVersion)
		if apierrors.IsNotFound(err) {
			continue // the version went away since the groups were read
		}
		if err != nil {
			return nil, err
		}
		found.VersionedResources[v.Version] = list.APIResources
	}
	return sharedGroupMapper(found)
}

func sharedGroupMapper(found *restmapper.APIGroupResources) (*groupMapper, error) {
	encoded, err := json.Marshal(found)
	if err != nil {
		return nil, err
	}
	key := string(encoded)
	groupMappers.Lock()
	defer groupMappers.Unlock()
	if g := groupMappers.byDiscovery[key].Value(); g != nil {
		return g, nil
	}
	g := &groupMapper{restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{found})}
	groupMappers.byDiscovery[key] = weak.Make(g)
	runtime.AddCleanup(g, forgetGroupMapper, key)
	return g, nil
}

// forgetGroupMapper removes the entry of a collected mapper, unless another
// mapper of the same discovery took its place meanwhile.
func forgetGroupMapper(key string) {
	groupMappers.Lock()
	defer groupMappers.Unlock()
	if groupMappers.byDiscovery[key].Value() == nil {
		delete(groupMappers.byDiscovery, key)
	}
}
