package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// tokenUsers authenticates a bearer token as the user it names.
type tokenUsers map[string]user.Info

func (t tokenUsers) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	u, ok := t[r.Header.Get("Authorization")]
	if !ok {
		return nil, false, nil
	}
	return &authenticator.Response{User: u}, true, nil
}

func TestCacheServerServesSystemMastersOnly(t *testing.T) {
	served := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	h := WithSystemMastersOnly(served, tokenUsers{
		"Bearer shard": &user.DefaultInfo{Name: "system:apiserver", Groups: []string{user.SystemPrivilegedGroup}},
		"Bearer team":  &user.DefaultInfo{Name: "system:serviceaccount:default:team", Groups: []string{user.AllAuthenticated}},
	})
	for token, want := range map[string]int{"": http.StatusForbidden, "Bearer team": http.StatusForbidden, "Bearer forged": http.StatusForbidden, "Bearer shard": http.StatusOK} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			r := httptest.NewRequest(method, "/services/cache/shards/root/clusters/root/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", nil)
			if token != "" {
				r.Header.Set("Authorization", token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != want {
				t.Errorf("%s with %q: got %d, want %d", method, token, w.Code, want)
			}
		}
	}
}
