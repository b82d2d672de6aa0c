package filters

import (
	"net/http"
	"slices"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// WithSystemMastersOnly lets only system:masters, the shards' own clients,
// reach handler. Fleetplane: kcp's cache server authenticates nobody
// (kcp-dev/kcp#2004) and the root shard mounts it ahead of its handler
// chain, so whoever reached the shard's port, without any credential, could
// read and write what every shard replicates (APIExports and their
// identities, cluster roles and their bindings).
func WithSystemMastersOnly(handler http.Handler, authn authenticator.Request) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !systemMasters(authn, r) {
			http.Error(w, "the cache server serves the hub's shards only", http.StatusForbidden)
			return
		}
		handler.ServeHTTP(w, r)
	})
}

// systemMasters says whether authn finds r made by a member of
// system:masters.
func systemMasters(authn authenticator.Request, r *http.Request) bool {
	if authn == nil {
		return false
	}
	resp, ok, err := authn.AuthenticateRequest(r)
	return err == nil && ok && slices.Contains(resp.User.GetGroups(), user.SystemPrivilegedGroup)
}
