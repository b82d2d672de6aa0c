package usage

import (
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// object is what an etcd key says about the object stored under it.
type object struct {
	cluster  logicalcluster.Name
	resource schema.GroupResource
}

// parseKey reads the logical cluster and resource from a key of kcp's
// storage, below its prefix (e.g. "/registry/"). Every key starts with the
// resource's group ("core" for the core group) and resource:
//
//	<group>/<resource>/<cluster>/...                 a built-in resource
//	<group>/<resource>/customresources/<cluster>/... a CRD of the cluster's own
//	<group>/<resource>/<identity>/<cluster>/...      a resource bound from an APIExport
//
// An identity is 64 hexadecimal digits. What a team names (namespaces,
// objects, its own CRDs' resources) comes only after the part that says
// where the cluster is, so a team cannot make its objects count against
// another's.
func parseKey(key string) (object, bool) {
	parts := strings.SplitN(key, "/", 6)
	if len(parts) < 4 || parts[0] == "" || parts[1] == "" {
		return object{}, false
	}
	gr := schema.GroupResource{Group: parts[0], Resource: parts[1]}
	if gr.Group == "core" {
		gr.Group = ""
	}
	rest := parts[2:]
	if len(rest) > 1 && (rest[0] == "customresources" || identity(rest[0])) {
		rest = rest[1:]
	}
	// The cluster is followed by at least the object's name.
	if len(rest) < 2 || rest[0] == "" {
		return object{}, false
	}
	return object{cluster: logicalcluster.Name(rest[0]), resource: gr}, true
}

// identity tells whether s is an APIExport's identity hash.
func identity(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
