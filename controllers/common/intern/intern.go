// Package intern makes the objects a cache holds share the strings and
// manifests they repeat. Decoding gives every object its own copy of each
// label, annotation, condition and manifest; across a fleet's Works and
// bindings most of them are the same few values (a placement's manifests go
// to every cluster it picks), and the copies were up to half of what a
// cached Work or binding took.
package intern

import (
	"unique"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	finalizers := o.GetFinalizers()
	for i := range finalizers {
		finalizers[i] = String(finalizers[i])
	}
	owners := o.GetOwnerReferences()
	for i := range owners {
		owners[i].APIVersion, owners[i].Kind, owners[i].Name = String(owners[i].APIVersion), String(owners[i].Kind), String(owners[i].Name)
	}
}

// Work interns a Work's manifests, apply strategy and status.
func Work(w *placementv1beta1.Work) {
	for i := range w.Spec.Workload.Manifests {
		w.Spec.Workload.Manifests[i].Raw = Bytes(w.Spec.Workload.Manifests[i].Raw)
	}
	applyStrategy(w.Spec.ApplyStrategy)
	Conditions(w.Status.Conditions)
	for i := range w.Status.ManifestConditions {
		mc := &w.Status.ManifestConditions[i]
		id := &mc.Identifier
		id.Group, id.Version, id.Kind, id.Resource = String(id.Group), String(id.Version), String(id.Kind), String(id.Resource)
		id.Namespace, id.Name = String(id.Namespace), String(id.Name)
		Conditions(mc.Conditions)
	}
}

// Binding interns a binding's cluster, snapshots, decision, apply strategy
// and conditions.
func Binding(b placementv1beta1.BindingObj) {
	spec := b.GetBindingSpec()
	spec.State, spec.TargetCluster = String(spec.State), String(spec.TargetCluster)
	spec.ResourceSnapshotName, spec.SchedulingPolicySnapshotName = String(spec.ResourceSnapshotName), String(spec.SchedulingPolicySnapshotName)
	spec.ClusterDecision.ClusterName, spec.ClusterDecision.Reason = String(spec.ClusterDecision.ClusterName), String(spec.ClusterDecision.Reason)
	applyStrategy(spec.ApplyStrategy)
	Conditions(b.GetBindingStatus().Conditions)
}

// PlacementStatus interns what a placement's status repeats: its selected
// resources, and each cluster's name and conditions.
func PlacementStatus(st *placementv1beta1.PlacementStatus) {
	Conditions(st.Conditions)
	st.ObservedResourceIndex = String(st.ObservedResourceIndex)
	for i := range st.SelectedResources {
		resourceIdentifier(&st.SelectedResources[i])
	}
	for i := range st.PerClusterPlacementStatuses {
		pc := &st.PerClusterPlacementStatuses[i]
		pc.ClusterName, pc.ObservedResourceIndex = String(pc.ClusterName), String(pc.ObservedResourceIndex)
		Conditions(pc.Conditions)
	}
}

func resourceIdentifier(id *placementv1beta1.ResourceIdentifier) {
	id.Group, id.Version, id.Kind = String(id.Group), String(id.Version), String(id.Kind)
	id.Namespace, id.Name = String(id.Namespace), String(id.Name)
}

func applyStrategy(s *placementv1beta1.ApplyStrategy) {
	if s == nil {
		return
	}
	s.ComparisonOption, s.WhenToApply = String(s.ComparisonOption), String(s.WhenToApply)
	s.Type, s.WhenToTakeOver = String(s.Type), String(s.WhenToTakeOver)
}

// Conditions interns the conditions' type, status, reason and message.
func Conditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type, c.Status, c.Reason, c.Message = String(c.Type), String(c.Status), String(c.Reason), String(c.Message)
	}
}

// Map returns m with its keys and values interned.
func Map(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[String(k)] = String(v)
	}
	return out
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
