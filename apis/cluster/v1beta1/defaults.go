package v1beta1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetFinalizerAndNameLabel gives a MemberCluster (typed or not) the
// hub's cleanup finalizer and the member-name label, which lets overrides
// and affinities target one cluster by name; a name still to be generated
// gets no label. It reports whether it changed anything.
func SetFinalizerAndNameLabel(mc metav1.Object) bool {
	changed := false
	if !slices.Contains(mc.GetFinalizers(), MemberClusterFinalizer) {
		mc.SetFinalizers(append(mc.GetFinalizers(), MemberClusterFinalizer))
		changed = true
	}
	if mc.GetName() == "" || mc.GetLabels()[MemberClusterNameLabel] == mc.GetName() {
		return changed
	}
	labels := mc.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[MemberClusterNameLabel] = mc.GetName()
	mc.SetLabels(labels)
	return true
}
