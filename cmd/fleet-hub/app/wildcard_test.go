package app

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// recorder records the path of the request it gets.
type recorder struct{ path string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.path = req.URL.Path
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

func TestDirectWildcardSendsListsAndWatchesAcrossWorkspacesToTheIdentityEndpoint(t *testing.T) {
	const vw = "/services/apiexport/1x2y/placement.kubernetes-fleet.io"
	for _, tc := range []struct {
		method, path, want string
	}{
		// Lists and watches of the group's resources across workspaces.
		{"GET", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings",
			"/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings:abc"},
		{"GET", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/resourceplacements",
			"/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/resourceplacements:abc"},
		// The rest goes to the virtual workspace as it is: the export's
		// APIBindings, discovery, one workspace, one object, a namespace,
		// writes, another group.
		{"GET", vw + "/clusters/*/apis/apis.kcp.io/v1alpha2/apibindings", ""},
		{"GET", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1", ""},
		{"GET", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/", ""},
		{"GET", vw + "/clusters/team-a/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings", ""},
		{"GET", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings/web-m1", ""},
		{"GET", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/namespaces/a/resourcebindings", ""},
		{"POST", vw + "/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings", ""},
		{"GET", vw + "/clusters/*/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters", ""},
		{"GET", "/services/apiexport/other/clusters/*/apis/placement.kubernetes-fleet.io/v1beta1/works", ""},
	} {
		next := &recorder{}
		d := newDirectWildcard(next, vw+"/", "placement.kubernetes-fleet.io", "abc")
		req := httptest.NewRequest(tc.method, "https://hub:6443"+tc.path+"?watch=true&resourceVersion=7", nil)
		resp, err := d.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		want := tc.want
		if want == "" {
			want = tc.path
		}
		if next.path != want {
			t.Errorf("%s %s went to %s, want %s", tc.method, tc.path, next.path, want)
		}
		if req.URL.Path != tc.path {
			t.Errorf("%s %s: the request given was changed to %s", tc.method, tc.path, req.URL.Path)
		}
	}
}
