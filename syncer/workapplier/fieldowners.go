package workapplier

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"github.com/fleetplane/fleetplane/syncer/diff"
)

// setOnTheMember keeps, of the fields full comparison found on the member
// alone, those someone set there: fields another field manager than this
// placement's owns on the live object, read fresh for its managedFields
// (the caches keep none). A field no manager owns (the API server's own,
// such as a Namespace's spec.finalizers) or that this placement's manager
// owns (defaults the member filled in when the placement created the
// object) is no drift. If the object cannot be read, no member-only field
// counts: a failed read never holds back an apply.
func (a *applier) setOnTheMember(ctx context.Context, live *unstructured.Unstructured, ds []diff.Detail) []diff.Detail {
	fresh, err := a.reader.fresh(ctx, live.GroupVersionKind(), client.ObjectKeyFromObject(live))
	if err != nil || fresh == nil {
		fresh = &unstructured.Unstructured{Object: map[string]any{}}
	}
	owned := ownedByOthers(fresh, a.owner.manager)
	return slices.DeleteFunc(ds, func(d diff.Detail) bool {
		return d.MemberOnly && !slices.ContainsFunc(owned, func(p string) bool {
			return p == d.Path || strings.HasPrefix(p, d.Path+"/") || strings.HasPrefix(d.Path, p+"/")
		})
	})
}

// ownedByOthers lists, as JSON pointers into obj, the fields of obj (not
// of its status) that field managers other than manager own.
func ownedByOthers(obj *unstructured.Unstructured, manager string) []string {
	var out []string
	for _, entry := range obj.GetManagedFields() {
		if entry.Manager == manager || entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(entry.FieldsV1.Raw)); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) {
			if ptr, ok := pointer(obj.Object, p); ok {
				out = append(out, ptr)
			}
		})
	}
	return out
}

// pointer turns a field path into a JSON pointer into obj, resolving list
// elements chosen by key or value to their index.
func pointer(obj map[string]any, p fieldpath.Path) (string, bool) {
	var b strings.Builder
	var cur any = obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return "", false
			}
			b.WriteString("/" + diff.Escape(*pe.FieldName))
			cur = m[*pe.FieldName]
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index >= len(l) {
				return "", false
			}
			b.WriteString("/" + strconv.Itoa(*pe.Index))
			cur = l[*pe.Index]
		default:
			l, ok := cur.([]any)
			if !ok {
				return "", false
			}
			i := slices.IndexFunc(l, func(e any) bool { return selects(pe, e) })
			if i < 0 {
				return "", false
			}
			b.WriteString("/" + strconv.Itoa(i))
			cur = l[i]
		}
	}
	return b.String(), true
}

// selects tells whether a list element is the one pe picks by key or value.
func selects(pe fieldpath.PathElement, e any) bool {
	if pe.Value != nil {
		return reflect.DeepEqual((*pe.Value).Unstructured(), e)
	}
	m, ok := e.(map[string]any)
	if !ok || pe.Key == nil {
		return false
	}
	for _, f := range *pe.Key {
		if !reflect.DeepEqual(f.Value.Unstructured(), m[f.Name]) {
			return false
		}
	}
	return true
}
