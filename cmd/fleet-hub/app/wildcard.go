package app

import (
	"net/http"
	"strings"
)

// directWildcard sends the placement cache's lists and watches across all
// workspaces (/clusters/*/apis/<group>/<version>/<resource>) straight to
// the hub's wildcard endpoint for the APIExport's identity, where the
// export's virtual workspace would forward them itself: on the way it
// decodes every object into maps and encodes it again, for each object
// listed and each event watched. Everything else (the APIBindings that
// tell the provider which workspaces to engage, discovery, requests to one
// workspace, writes) still goes to the virtual workspace. Both are served
// by the same embedded kcp.
type directWildcard struct {
	next http.RoundTripper
	// from is the path of the virtual workspace's wildcard API group,
	// e.g. /services/apiexport/root:fleet/<export>/clusters/*/apis/<group>/.
	from string
	// to is the same API group at the hub's wildcard endpoint.
	to string
	// identity is the APIExport's identity hash, which selects the
	// resources bound from this export among those of the same name.
	identity string
}

func newDirectWildcard(next http.RoundTripper, virtualWorkspacePath, group, identity string) *directWildcard {
	return &directWildcard{
		next:     next,
		from:     strings.TrimSuffix(virtualWorkspacePath, "/") + "/clusters/*/apis/" + group + "/",
		to:       "/clusters/*/apis/" + group + "/",
		identity: identity,
	}
}

func (d *directWildcard) RoundTrip(req *http.Request) (*http.Response, error) {
	path, ok := d.direct(req)
	if !ok {
		return d.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it was given.
	req = req.Clone(req.Context())
	req.URL.Path, req.URL.RawPath = path, ""
	return d.next.RoundTrip(req)
}

// direct returns the direct path of a list or watch of a resource of the
// group across all workspaces.
func (d *directWildcard) direct(req *http.Request) (string, bool) {
	if req.Method != http.MethodGet {
		return "", false
	}
	rest, ok := strings.CutPrefix(req.URL.Path, d.from)
	if !ok {
		return "", false
	}
	version, resource, ok := strings.Cut(rest, "/")
	// Discovery has no resource; one object or a namespace has more.
	if !ok || resource == "" || strings.ContainsAny(resource, "/:") {
		return "", false
	}
	return d.to + version + "/" + resource + ":" + d.identity, true
}
