package framework

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client returns a controller-runtime client for the workspace at path. Its
// REST mapper discovers kinds lazily, so kinds from new bindings resolve.
func (h *Hub) Client(path string, s *runtime.Scheme) (client.Client, error) {
	if s == nil {
		s = clientgoscheme.Scheme
	}
	return client.New(h.Config(path), client.Options{Scheme: s})
}
