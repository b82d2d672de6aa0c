package clients

import (
	"cmp"
	"slices"
	"strings"
	"unique"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// Resource is a resource a workspace serves, at its preferred version.
type Resource struct {
	schema.GroupVersionResource
	Kind string
}

// NamespacedResources returns the namespaced resources the workspace serves
// and lets list, at their preferred versions. When some API groups fail to
// answer, it returns those of the others with the error, and keeps
// nothing: the caller decides whether it can do without. A complete discovery is kept
// until the workspace's APIs change, as one interned string: the hundreds
// of team workspaces that serve the same kinds share it (whole discovery
// documents, kept per workspace, took ~85 KB each).
func (w *Workspace) NamespacedResources() ([]Resource, error) {
	w.resourcesMu.Lock()
	known, forgotten := w.namespaced, w.resourcesForgotten
	w.resourcesMu.Unlock()
	if known != (unique.Handle[string]{}) {
		return decodeResources(known.Value()), nil
	}
	lists, err := discovery.ServerPreferredNamespacedResources(w.Discovery)
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var out []Resource
	for _, l := range lists {
		gv, parseErr := schema.ParseGroupVersion(l.GroupVersion)
		if parseErr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "list") {
				out = append(out, Resource{GroupVersionResource: gv.WithResource(r.Name), Kind: r.Kind})
			}
		}
	}
	// Discovery lists groups in no fixed order; sorted, equal sets share.
	slices.SortFunc(out, func(a, b Resource) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Version, b.Version))
	})
	if err != nil {
		return out, err // some groups failed to answer: what did, kept nowhere
	}
	w.resourcesMu.Lock()
	if w.resourcesForgotten == forgotten { // else the APIs changed meanwhile
		w.namespaced = unique.Make(encodeResources(out))
	}
	w.resourcesMu.Unlock()
	return out, nil
}

// forgetResources drops the kept discovery; the next call discovers again.
func (w *Workspace) forgetResources() {
	w.resourcesMu.Lock()
	defer w.resourcesMu.Unlock()
	w.namespaced = unique.Handle[string]{}
	w.resourcesForgotten++
}

// encodeResources writes one resource per line as group, version, resource
// and kind separated by spaces, which none of them contains.
func encodeResources(rs []Resource) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Group + " " + r.Version + " " + r.Resource + " " + r.Kind + "\n")
	}
	return b.String()
}

func decodeResources(s string) []Resource {
	var out []Resource
	for line := range strings.Lines(s) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), " ")
		out = append(out, Resource{GroupVersionResource: schema.GroupVersionResource{Group: f[0], Version: f[1], Resource: f[2]}, Kind: f[3]})
	}
	return out
}
