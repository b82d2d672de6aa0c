package localfleet

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

// ControllerClient returns a client with the privilege of the hub's own
// controllers (system:masters), for suites that play the controllers' part,
// e.g. writing Work for the syncers directly. Every other identity, the hub
// admin included, may only read Work, bindings and snapshots.
func (h *Hub) ControllerClient(path string, s *runtime.Scheme) (client.Client, error) {
	cfg, err := h.ShardAdmin(path)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	return client.New(cfg, client.Options{Scheme: s})
}
