package clients

import (
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// lazyMapper maps the kinds of one workspace from the discovery of only the
// API groups asked about, and starts over on Reset (the workspace's APIs
// changed). A mapper of every API a workspace serves, built from its whole
// discovery, held ~250 KB for each of hundreds of team workspaces, most of
// which place namespaces and core kinds only.
type lazyMapper struct {
	config     *rest.Config
	httpClient *http.Client

	mu      sync.RWMutex
	current meta.RESTMapper
}

var _ meta.ResettableRESTMapper = &lazyMapper{}

func newLazyMapper(config *rest.Config, httpClient *http.Client) (*lazyMapper, error) {
	m := &lazyMapper{config: config, httpClient: httpClient}
	current, err := apiutil.NewDynamicRESTMapper(config, httpClient)
	m.current = current
	return m, err
}

// Reset forgets what was discovered; the next mapping discovers again.
func (m *lazyMapper) Reset() {
	fresh, err := apiutil.NewDynamicRESTMapper(m.config, m.httpClient)
	if err != nil {
		// Only a nil HTTP client fails, which newLazyMapper refused.
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.current = fresh
}

func (m *lazyMapper) get() meta.RESTMapper {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.current
}

func (m *lazyMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.get().KindFor(resource)
}

func (m *lazyMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.get().KindsFor(resource)
}

func (m *lazyMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.get().ResourceFor(input)
}

func (m *lazyMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return m.get().ResourcesFor(input)
}

func (m *lazyMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return m.get().RESTMapping(gk, versions...)
}

func (m *lazyMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return m.get().RESTMappings(gk, versions...)
}

func (m *lazyMapper) ResourceSingularizer(resource string) (string, error) {
	return m.get().ResourceSingularizer(resource)
}
