package app

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestFrontProxyDropsTheIdentityHeadersAClientSends(t *testing.T) {
	var got http.Header
	h := withoutClaimedIdentity(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	r := httptest.NewRequest(http.MethodGet, "/clusters/root:fleet/api/v1/namespaces", nil)
	r.Header.Set("X-Remote-User", "kcp-admin")
	r.Header.Add("X-Remote-Group", "system:masters")
	r.Header.Set("x-remote-extra-scopes", "cluster:root")
	r.Header.Set("Authorization", "Bearer team-token")
	h.ServeHTTP(httptest.NewRecorder(), r)
	for _, name := range []string{"X-Remote-User", "X-Remote-Group", "X-Remote-Extra-Scopes"} {
		if v := got.Values(name); len(v) > 0 {
			t.Errorf("%s: %v reaches the shard as the client sent it", name, v)
		}
	}
	if got.Get("Authorization") != "Bearer team-token" {
		t.Error("the client's token no longer reaches the shard, which checks it")
	}
}
