package clients

import (
	"crypto/sha256"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"weak"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
)

// lazyMapper maps the kinds of one workspace from the discovery of only the
// API groups asked about, and starts over on Reset (the workspace's APIs
// changed). A mapper of every API a workspace serves, built from its whole
// discovery, held ~250 KB for each of hundreds of team workspaces, most of
// which place namespaces and core kinds only; and a group maps the same in
// most workspaces (the core kinds), so workspaces that serve a group alike
// share one mapper of it (groupMappers). The placement group is mapped as
// Fleetplane serves it, never discovered (placementGroup).
type lazyMapper struct {
	discovery discovery.DiscoveryInterface

	mu     sync.RWMutex
	groups map[string]*groupMapper
	// resets counts Resets: a discovery that began before one is not kept.
	resets uint64
	// discovering joins the reconciles that ask about a group at once (a
	// new workspace's first placement) in one discovery of it, per Reset.
	discovering singleflight.Group
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
	m.resets++
}

// group returns the mapper of an API group, discovering the group if it is
// not known yet or again is set (a kind was not found in what is known);
// fresh tells that it was discovered now, for this caller alone.
func (m *lazyMapper) group(name string, again bool) (g *groupMapper, fresh bool, err error) {
	if name == fleetconfig.PlacementExport {
		g, err := placementGroup()
		return g, true, err // never discovered: nothing to look up again
	}
	m.mu.RLock()
	g, ok := m.groups[name]
	resets := m.resets
	m.mu.RUnlock()
	if ok && !again {
		return g, false, nil
	}
	discover := func() (any, error) {
		g, complete, err := discoverGroup(m.discovery, name)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if complete && m.resets == resets {
			m.groups[name] = g
		}
		return g, nil
	}
	// A discovery already under way may have begun before a kind the
	// caller wants was added: asked again (after no such kind was found),
	// the caller discovers on its own, and a shared answer is not fresh.
	var found any
	shared := false
	if again {
		found, err = discover()
	} else {
		found, err, shared = m.discovering.Do(name+"/"+strconv.FormatUint(resets, 10), discover)
	}
	if err != nil {
		return nil, false, err
	}
	return found.(*groupMapper), !shared, nil
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
	if g, err := placementGroup(); err == nil {
		if singular, err := g.ResourceSingularizer(resource); err == nil {
			return singular, nil
		}
	}
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

// groupMappers holds the group mappers in use, by a digest of what they map,
// so that workspaces serving a group alike share its mapper. A mapper no
// workspace holds any more is collected and its entry removed.
var groupMappers = struct {
	sync.Mutex
	byDigest map[[sha256.Size]byte]weak.Pointer[groupMapper]
}{byDigest: map[[sha256.Size]byte]weak.Pointer[groupMapper]{}}

// discoverGroup discovers the versions of an API group and returns its
// mapper. complete is false when the group is not served (it maps nothing)
// or some of its versions failed to answer (it maps the others): such a
// mapper is used once, not kept.
func discoverGroup(d discovery.DiscoveryInterface, name string) (g *groupMapper, complete bool, err error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, false, err
	}
	found := &restmapper.APIGroupResources{VersionedResources: map[string][]metav1.APIResource{}}
	served := false
	for _, g := range groups.Groups {
		if g.Name == name {
			found.Group, served = g, true
		}
	}
	complete = served
	var failed error
	for _, v := range found.Group.Versions {
		list, err := d.ServerResourcesForGroupVersion(v.GroupVersion)
		if apierrors.IsNotFound(err) {
			continue // the version went away since the groups were read
		}
		if err != nil {
			complete, failed = false, err
			continue
		}
		found.VersionedResources[v.Version] = mapped(list.APIResources)
	}
	if failed != nil && len(found.VersionedResources) == 0 {
		return nil, false, failed
	}
	return sharedGroupMapper(found), complete, nil
}

// mapped keeps of a version's resources what a mapper reads, in name order:
// servers list the kinds of CRDs in no fixed order, and what else they tell
// (verbs, short names, storage version hashes, which differ between
// workspaces for the same CRD) would keep equal groups from sharing.
func mapped(resources []metav1.APIResource) []metav1.APIResource {
	out := make([]metav1.APIResource, 0, len(resources))
	for _, r := range resources {
		if !strings.Contains(r.Name, "/") {
			out = append(out, metav1.APIResource{Name: r.Name, SingularName: r.SingularName, Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	slices.SortFunc(out, func(a, b metav1.APIResource) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func sharedGroupMapper(found *restmapper.APIGroupResources) *groupMapper {
	found.Group.ServerAddressByClientCIDRs = nil
	encoded, _ := json.Marshal(found) // discovery types always encode
	digest := sha256.Sum256(encoded)
	groupMappers.Lock()
	defer groupMappers.Unlock()
	if g := groupMappers.byDigest[digest].Value(); g != nil {
		return g
	}
	g := &groupMapper{restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{found})}
	groupMappers.byDigest[digest] = weak.Make(g)
	runtime.AddCleanup(g, forgetGroupMapper, digest)
	return g
}

// forgetGroupMapper removes the entry of a collected mapper, unless another
// mapper of the same group took its place meanwhile.
func forgetGroupMapper(digest [sha256.Size]byte) {
	groupMappers.Lock()
	defer groupMappers.Unlock()
	if groupMappers.byDigest[digest].Value() == nil {
		delete(groupMappers.byDigest, digest)
	}
}
