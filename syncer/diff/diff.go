// Package diff compares what the hub asks for with what a member cluster has.
// A partial comparison looks only at the fields the hub manifest sets; a full
// comparison also reports fields that exist only on the member.
package diff

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetplane/fleetplane/controllers/common/quantities"
)

// WholeObject is the hub's value, at path "/", of an object the member
// cluster does not have: KubeFleet's words, which its clients compare.
const WholeObject = "(the whole object)"

// Detail is one difference, at a JSON pointer path.
type Detail struct {
	Path     string
	InMember string
	InHub    string
	// MemberOnly marks a field the member has and the hub's manifest does
	// not set (full comparison): applying the manifest leaves it as it is.
	MemberOnly bool
}

// comparedMetadata are the metadata fields a manifest may set; the rest of
// metadata is the member cluster's.
var comparedMetadata = map[string]bool{"labels": true, "annotations": true}

// Compare returns the differences between hub (the manifest) and member (the
// live object). With full set, fields only the member has are reported too.
// Status and server-set metadata are never compared, nor are labels and
// annotations in the Kubernetes and fleet domains.
func Compare(hub, member *unstructured.Unstructured, full bool) []Detail {
	var out []Detail
	for key, hv := range hub.Object {
		switch key {
		case "status", "apiVersion", "kind":
			continue
		case "metadata":
			out = append(out, compareMetadata(hv, member.Object["metadata"], full)...)
			continue
		}
		out = append(out, compare("/"+Escape(key), hv, member.Object[key], full)...)
	}
	if full {
		for key, mv := range member.Object {
			if _, ok := hub.Object[key]; !ok && key != "status" && key != "metadata" {
				out = append(out, Detail{Path: "/" + Escape(key), InMember: render(mv), MemberOnly: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func compareMetadata(hub, member any, full bool) []Detail {
	hm, _ := hub.(map[string]any)
	mm, _ := member.(map[string]any)
	var out []Detail
	for key := range comparedMetadata {
		hv, _ := hm[key].(map[string]any)
		mv, _ := mm[key].(map[string]any)
		out = append(out, compare("/metadata/"+key, userKeys(hv), userKeys(mv), full)...)
	}
	return out
}

// reservedDomains are label and annotation domains that other controllers
// and the fleet itself write on the member.
var reservedDomains = []string{"kubernetes.io/", "k8s.io/", "kubernetes-fleet.io/", "fleetplane.io/"}

// userKeys drops keys in reserved domains.
func userKeys(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if slices.ContainsFunc(reservedDomains, func(d string) bool { return strings.Contains(k, d) }) {
			continue
		}
		out[k] = v
	}
	return out
}

func compare(path string, hub, member any, full bool) []Detail {
	switch h := hub.(type) {
	case map[string]any:
		m, ok := member.(map[string]any)
		if !ok {
			return []Detail{{Path: path, InHub: render(hub), InMember: render(member)}}
		}
		var out []Detail
		for k, hv := range h {
			mv, present := m[k]
			if !present {
				if hv == nil {
					continue
				}
				out = append(out, Detail{Path: path + "/" + Escape(k), InHub: render(hv)})
				continue
			}
			out = append(out, compare(path+"/"+Escape(k), hv, mv, full)...)
		}
		if full {
			for k, mv := range m {
				if _, ok := h[k]; !ok {
					out = append(out, Detail{Path: path + "/" + Escape(k), InMember: render(mv), MemberOnly: true})
				}
			}
		}
		return out
	case []any:
		m, ok := member.([]any)
		if !ok || len(m) != len(h) {
			return []Detail{{Path: path, InHub: render(hub), InMember: render(member)}}
		}
		var out []Detail
		for i := range h {
			out = append(out, compare(path+"/"+strconv.Itoa(i), h[i], m[i], full)...)
		}
		return out
	default:
		if equalScalars(hub, member) {
			return nil
		}
		return []Detail{{Path: path, InHub: render(hub), InMember: render(member)}}
	}
}

// equalScalars treats numbers as equal by value (JSON decoding yields int64
// on one side and float64 on the other), and quantities too: the API server
// stores "0.5" CPU as "500m".
func equalScalars(a, b any) bool {
	fa, aNum := number(a)
	fb, bNum := number(b)
	if aNum && bNum {
		return fa == fb
	}
	if reflect.DeepEqual(a, b) {
		return true
	}
	sa, aStr := a.(string)
	sb, bStr := b.(string)
	if !aStr || !bStr {
		return false
	}
	qa, errA := quantities.Parse(sa)
	qb, errB := quantities.Parse(sb)
	return errA == nil && errB == nil && qa.Cmp(qb) == 0
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func render(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// Escape encodes a key for a JSON pointer (RFC 6901).
func Escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// MaxDetails caps the differences reported for one object.
const MaxDetails = 100

// redacted replaces Secret values in reports.
const redacted = "(redacted)"

// ForReport caps the details and hides the values of a Secret's data: a
// report reaches the hub, where the team, and anyone who reads the status,
// must never see them.
func ForReport(obj *unstructured.Unstructured, ds []Detail) []Detail {
	if len(ds) > MaxDetails {
		ds = ds[:MaxDetails]
	}
	if obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return ds
	}
	out := make([]Detail, len(ds))
	for i, d := range ds {
		if d.Path == "/data" || d.Path == "/stringData" || strings.HasPrefix(d.Path, "/data/") || strings.HasPrefix(d.Path, "/stringData/") {
			d.InHub, d.InMember = hide(d.InHub), hide(d.InMember)
		}
		out[i] = d
	}
	return out
}

func hide(v string) string {
	if v == "" {
		return ""
	}
	return redacted
}
