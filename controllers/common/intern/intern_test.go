package intern

import (
	"encoding/json"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func condition(t, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: "All corresponding work objects are applied"}
}

func work(name string) *placementv1beta1.Work {
	return &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "fleet-member-member-1", UID: types.UID("uid-" + name),
			Labels:      map[string]string{placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.ParentBindingLabel: name},
			Annotations: map[string]string{"kcp.io/cluster": "1zlx1h1bazbobhny"},
			Finalizers:  []string{placementv1beta1.WorkFinalizer},
		},
		Spec: placementv1beta1.WorkSpec{
			Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"}}`)}},
			}},
			ApplyStrategy: &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeClientSideApply},
		},
		Status: placementv1beta1.WorkStatus{
			Conditions: []metav1.Condition{condition("Applied", "AllManifestsApplied")},
			ManifestConditions: []placementv1beta1.ManifestCondition{{
				Identifier: placementv1beta1.WorkResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "settings", Namespace: "web"},
				Conditions: []metav1.Condition{condition("Applied", "Applied")},
			}},
		},
	}
}

// decoded gives each object its own copy of every string, as a watch does.
func decoded[T client.Object](t *testing.T, o T) T {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	out := o.DeepCopyObject().(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func same(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }

func transformed[T client.Object](t *testing.T, o T) T {
	t.Helper()
	before := o.DeepCopyObject()
	got, err := Transform(o)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(before, got) {
		t.Fatalf("interning changed the object:\n%#v\nwant\n%#v", got, before)
	}
	return got.(T)
}

func TestWorksShareWhatTheyRepeat(t *testing.T) {
	a, b := transformed(t, decoded(t, work("web-a"))), transformed(t, decoded(t, work("web-b")))

	for what, pair := range map[string][2]string{
		"namespace":               {a.Namespace, b.Namespace},
		"label":                   {a.Labels[placementv1beta1.PlacementTrackingLabel], b.Labels[placementv1beta1.PlacementTrackingLabel]},
		"annotation":              {a.Annotations["kcp.io/cluster"], b.Annotations["kcp.io/cluster"]},
		"finalizer":               {a.Finalizers[0], b.Finalizers[0]},
		"apply strategy":          {string(a.Spec.ApplyStrategy.Type), string(b.Spec.ApplyStrategy.Type)},
		"condition reason":        {a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason},
		"condition message":       {a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
		"manifest identifier":     {a.Status.ManifestConditions[0].Identifier.Name, b.Status.ManifestConditions[0].Identifier.Name},
		"manifest condition type": {a.Status.ManifestConditions[0].Conditions[0].Type, b.Status.ManifestConditions[0].Conditions[0].Type},
	} {
		if !same(pair[0], pair[1]) {
			t.Errorf("the Works do not share their %s %q", what, pair[0])
		}
	}
	if ra, rb := a.Spec.Workload.Manifests[0].Raw, b.Spec.Workload.Manifests[0].Raw; unsafe.SliceData(ra) != unsafe.SliceData(rb) {
		t.Error("the Works do not share their manifest")
	}
	if a.Name == b.Name || a.Labels[placementv1beta1.ParentBindingLabel] == b.Labels[placementv1beta1.ParentBindingLabel] {
		t.Error("the Works' own names became one")
	}

	// A cache may transform an object twice.
	again := transformed(t, a)
	if !same(again.Namespace, b.Namespace) {
		t.Error("a second transform lost the sharing")
	}
}

func TestBindingsAndPlacementsShareWhatTheyRepeat(t *testing.T) {
	binding := func(name string) *placementv1beta1.ClusterResourceBinding {
		return &placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: placementv1beta1.ResourceBindingSpec{
				State: placementv1beta1.BindingStateBound, TargetCluster: "member-1", ResourceSnapshotName: "web-0-snapshot",
				ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: "member-1", Reason: "picked by scheduling policy", Selected: true},
			},
			Status: placementv1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{condition("Available", "AllWorkAreAvailable")}},
		}
	}
	a, b := transformed(t, decoded(t, binding("web-a"))), transformed(t, decoded(t, binding("web-b")))
	if !same(a.Spec.ResourceSnapshotName, b.Spec.ResourceSnapshotName) || !same(a.Spec.ClusterDecision.Reason, b.Spec.ClusterDecision.Reason) ||
		!same(a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason) {
		t.Error("the bindings do not share their snapshot, decision or conditions")
	}

	placement := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Status: placementv1beta1.PlacementStatus{
			SelectedResources: []placementv1beta1.ResourceIdentifier{{Version: "v1", Kind: "ConfigMap", Name: "settings", Namespace: "web"}},
			PerClusterPlacementStatuses: []placementv1beta1.PerClusterPlacementStatus{
				{ClusterName: "member-1", Conditions: []metav1.Condition{condition("Available", "AllWorkAreAvailable")}},
				{ClusterName: "member-2", Conditions: []metav1.Condition{condition("Available", "AllWorkAreAvailable")}},
			},
		},
	}
	p := transformed(t, decoded(t, placement))
	pc := p.Status.PerClusterPlacementStatuses
	if !same(pc[0].Conditions[0].Message, pc[1].Conditions[0].Message) || !same(pc[0].Conditions[0].Reason, a.Status.Conditions[0].Reason) {
		t.Error("the placement's clusters do not share their conditions")
	}
}
