// Package intern makes the objects a cache holds share the strings,
// manifests, label maps and conditions they repeat. Decoding gives every
// object its own copy of each label, annotation, condition and manifest;
// across a fleet's Works and bindings most of them are the same few values
// (a placement's manifests go to every cluster it picks, and its bindings
// report the same conditions, set in the same seconds), and the copies were
// up to half of what a cached Work or binding took.
//
// What is shared is read-only: the hub writes no object a cache holds (its
// readers get deep copies or, where they ask for the cache's own object,
// only read it), and the transform runs before an object is stored (not
// again on a resync: see third_party/kcp-apimachinery).
package intern

import (
	"maps"
	"slices"
	"unique"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Transform interns what an object repeats; it is a cache transform, run
// on every object before the cache stores it. Names, UIDs and resource
// versions are the object's own and stay as they are.
func Transform(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		Meta(o)
	}
	switch o := obj.(type) {
	case *placementv1beta1.Work:
		Work(o)
	case placementv1beta1.BindingObj:
		Binding(o)
	case placementv1beta1.PlacementObj:
		PlacementStatus(o.GetPlacementStatus())
	}
	return obj, nil
}

// Meta interns an object's namespace, labels, annotations, finalizers and
// owners.
func Meta(o client.Object) {
	o.SetNamespace(String(o.GetNamespace()))
	o.SetLabels(Map(o.GetLabels()))
	o.SetAnnotations(Map(o.GetAnnotations()))
	o.SetFinalizers(Strings(o.GetFinalizers()))
	o.SetOwnerReferences(owners(o.GetOwnerReferences()))
}

// Work interns a Work's manifests, apply strategy and status.
func Work(w *placementv1beta1.Work) {
	for i := range w.Spec.Workload.Manifests {
		w.Spec.Workload.Manifests[i].Raw = Bytes(w.Spec.Workload.Manifests[i].Raw)
	}
	w.Spec.ApplyStrategy = applyStrategy(w.Spec.ApplyStrategy)
	w.Status.Conditions = Conditions(w.Status.Conditions)
	w.Status.ManifestConditions = manifestConditions(w.Status.ManifestConditions)
}

// manifestConditions returns the one shared copy of mcs when they report
// nothing but conditions (no drifts, differences, back-reported status,
// workload state or warnings: those are the object's alone), else mcs with
// their identifiers and conditions interned.
func manifestConditions(mcs []placementv1beta1.ManifestCondition) []placementv1beta1.ManifestCondition {
	if len(mcs) == 0 {
		return mcs
	}
	var key keyOf
	for _, mc := range mcs {
		if mc.DriftDetails != nil || mc.DiffDetails != nil || mc.BackReportedStatus != nil || mc.Workload != nil || len(mc.Warnings) > 0 {
			for i := range mcs {
				internManifestCondition(&mcs[i])
			}
			return mcs
		}
		id := mc.Identifier
		key = key.appendInt(int64(id.Ordinal)).appendString(id.Group).appendString(id.Version).appendString(id.Kind).
			appendString(id.Resource).appendString(id.Namespace).appendString(id.Name).appendConditions(mc.Conditions)
	}
	return sharedManifestConditions.share(key, func() []placementv1beta1.ManifestCondition {
		out := make([]placementv1beta1.ManifestCondition, len(mcs))
		copy(out, mcs)
		for i := range out {
			internManifestCondition(&out[i])
		}
		return out
	})
}

func internManifestCondition(mc *placementv1beta1.ManifestCondition) {
	id := &mc.Identifier
	id.Group, id.Version, id.Kind, id.Resource = String(id.Group), String(id.Version), String(id.Kind), String(id.Resource)
	id.Namespace, id.Name = String(id.Namespace), String(id.Name)
	mc.Conditions = Conditions(mc.Conditions)
}

// Binding interns a binding's cluster, snapshots, decision, apply strategy
// and conditions.
func Binding(b placementv1beta1.BindingObj) {
	spec := b.GetBindingSpec()
	spec.State, spec.TargetCluster = String(spec.State), String(spec.TargetCluster)
	spec.ResourceSnapshotName, spec.SchedulingPolicySnapshotName = String(spec.ResourceSnapshotName), String(spec.SchedulingPolicySnapshotName)
	spec.ClusterDecision.ClusterName, spec.ClusterDecision.Reason = String(spec.ClusterDecision.ClusterName), String(spec.ClusterDecision.Reason)
	spec.ApplyStrategy = applyStrategy(spec.ApplyStrategy)
	st := b.GetBindingStatus()
	st.Conditions = Conditions(st.Conditions)
}

// PlacementStatus interns what a placement's status repeats: its selected
// resources, and each cluster's name and conditions.
func PlacementStatus(st *placementv1beta1.PlacementStatus) {
	st.Conditions = Conditions(st.Conditions)
	st.ObservedResourceIndex = String(st.ObservedResourceIndex)
	for i := range st.SelectedResources {
		resourceIdentifier(&st.SelectedResources[i])
	}
	for i := range st.PerClusterPlacementStatuses {
		pc := &st.PerClusterPlacementStatuses[i]
		pc.ClusterName, pc.ObservedResourceIndex = String(pc.ClusterName), String(pc.ObservedResourceIndex)
		pc.Conditions = Conditions(pc.Conditions)
	}
}

func resourceIdentifier(id *placementv1beta1.ResourceIdentifier) {
	id.Group, id.Version, id.Kind = String(id.Group), String(id.Version), String(id.Kind)
	id.Namespace, id.Name = String(id.Namespace), String(id.Name)
}

// applyStrategy returns the one shared copy of s: a placement's bindings
// and Works all carry its strategy.
func applyStrategy(s *placementv1beta1.ApplyStrategy) *placementv1beta1.ApplyStrategy {
	if s == nil {
		return nil
	}
	var force *bool
	if s.ServerSideApplyConfig != nil {
		force = &s.ServerSideApplyConfig.ForceConflicts
	}
	key := keyOf{}.appendString(string(s.ComparisonOption)).appendString(string(s.WhenToApply)).appendString(string(s.Type)).
		appendString(string(s.WhenToTakeOver)).appendInt(flag(force)).appendInt(flag(ptr.To(s.AllowCoOwnership)))
	return sharedStrategies.share(key, func() *placementv1beta1.ApplyStrategy {
		out := s.DeepCopy()
		out.ComparisonOption, out.WhenToApply = String(out.ComparisonOption), String(out.WhenToApply)
		out.Type, out.WhenToTakeOver = String(out.Type), String(out.WhenToTakeOver)
		return out
	})
}

var (
	sharedConditions = newTable[[]metav1.Condition]()
	sharedMaps       = newTable[map[string]string]()
	sharedStrings    = newTable[[]string]()
	sharedOwners     = newTable[[]metav1.OwnerReference]()
	sharedStrategies = newTable[*placementv1beta1.ApplyStrategy]()

	sharedManifestConditions = newTable[[]placementv1beta1.ManifestCondition]()
)

// Strings returns the one shared copy of ss, its strings interned.
func Strings(ss []string) []string {
	if len(ss) == 0 {
		return ss
	}
	var key keyOf
	for _, s := range ss {
		key = key.appendString(s)
	}
	return sharedStrings.share(key, func() []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = String(s)
		}
		return out
	})
}

// owners returns the one shared copy of refs: the bindings of a placement
// all have it as their owner.
func owners(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if len(refs) == 0 {
		return refs
	}
	var key keyOf
	for _, r := range refs {
		key = key.appendString(r.APIVersion).appendString(r.Kind).appendString(r.Name).appendString(string(r.UID)).
			appendInt(flag(r.Controller)).appendInt(flag(r.BlockOwnerDeletion))
	}
	return sharedOwners.share(key, func() []metav1.OwnerReference {
		out := make([]metav1.OwnerReference, len(refs))
		for i, r := range refs {
			r.APIVersion, r.Kind, r.Name = String(r.APIVersion), String(r.Kind), String(r.Name)
			out[i] = r
		}
		return out
	})
}

// flag tells an unset flag from a false one.
func flag(b *bool) int64 {
	switch {
	case b == nil:
		return 0
	case *b:
		return 2
	}
	return 1
}

// Conditions returns the one shared copy of cs, its strings interned; cs
// itself is left as it is. A copy holds cs's conditions and no spare room.
func Conditions(cs []metav1.Condition) []metav1.Condition {
	if len(cs) == 0 {
		return cs
	}
	return sharedConditions.share(keyOf{}.appendConditions(cs), func() []metav1.Condition {
		out := make([]metav1.Condition, len(cs))
		for i, c := range cs {
			c.Type, c.Status, c.Reason, c.Message = String(c.Type), String(c.Status), String(c.Reason), String(c.Message)
			out[i] = c
		}
		return out
	})
}

// Map returns the one shared copy of m, its keys and values interned; m
// itself is left as it is.
func Map(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var key keyOf
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key = key.appendString(k).appendString(m[k])
	}
	return sharedMaps.share(key, func() map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[String(k)] = String(v)
		}
		return out
	})
}

// String returns the one shared copy of s.
func String[S ~string](s S) S {
	if s == "" {
		return s
	}
	return S(unique.Make(string(s)).Value())
}

// Bytes returns the one shared copy of b. The copy is read-only: what a
// cache holds is never written, and its readers get deep copies.
func Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := unique.Make(string(b)).Value()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
