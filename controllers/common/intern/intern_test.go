package intern

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
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
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: placementv1beta1.GroupVersion.String(), Kind: "ClusterResourcePlacement", Name: "web", UID: "uid-web", Controller: ptr.To(true),
			}}},
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
	if unsafe.SliceData(a.OwnerReferences) != unsafe.SliceData(b.OwnerReferences) {
		t.Error("the bindings do not share their owner")
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

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameConditions(a, b []metav1.Condition) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

func TestEqualMapsAndConditionsAreOneCopy(t *testing.T) {
	set := metav1.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	w := work("web-a")
	w.Status.Conditions[0].LastTransitionTime = set
	a, b := transformed(t, decoded(t, w)), transformed(t, decoded(t, work("web-b")))
	w.Name = "web-c"
	w.Labels[placementv1beta1.ParentBindingLabel] = "web-c"
	c := transformed(t, decoded(t, w))

	if unsafe.SliceData(a.Finalizers) != unsafe.SliceData(b.Finalizers) {
		t.Error("the Works do not share their finalizers")
	}
	if a.Spec.ApplyStrategy != b.Spec.ApplyStrategy {
		t.Error("the Works do not share their apply strategy")
	}
	if w.Spec.ApplyStrategy.ServerSideApplyConfig = (&placementv1beta1.ServerSideApplyConfig{}); transformed(t, decoded(t, w)).Spec.ApplyStrategy == a.Spec.ApplyStrategy {
		t.Error("apply strategies with different server-side apply settings are one copy")
	}
	if !sameMap(a.Annotations, b.Annotations) {
		t.Error("the Works do not share their equal annotations")
	}
	if sameMap(a.Labels, b.Labels) {
		t.Error("Works with different labels hold one map")
	}
	if !sameConditions(a.Status.Conditions, c.Status.Conditions) || !sameConditions(a.Status.ManifestConditions[0].Conditions, b.Status.ManifestConditions[0].Conditions) {
		t.Error("the Works do not share their equal conditions")
	}
	if unsafe.SliceData(a.Status.ManifestConditions) != unsafe.SliceData(b.Status.ManifestConditions) {
		t.Error("the Works do not share their equal manifest conditions")
	}
	w.Status.ManifestConditions[0].DriftDetails = &placementv1beta1.DriftDetails{ObservedInMemberClusterGeneration: 2}
	if d := transformed(t, decoded(t, w)); unsafe.SliceData(d.Status.ManifestConditions) == unsafe.SliceData(a.Status.ManifestConditions) ||
		!same(d.Status.ManifestConditions[0].Identifier.Name, a.Status.ManifestConditions[0].Identifier.Name) {
		t.Error("a Work's drift details are shared, or its identifiers not interned")
	}
	for name, own := range map[string]func(*placementv1beta1.ManifestCondition){
		"workload state": func(mc *placementv1beta1.ManifestCondition) {
			mc.Workload = &placementv1beta1.WorkloadState{Phase: "Bound"}
		},
		"warnings": func(mc *placementv1beta1.ManifestCondition) {
			mc.Warnings = []placementv1beta1.MemberWarning{{Reason: "Failed"}}
		},
	} {
		mine := w.DeepCopy()
		mine.Status.ManifestConditions[0].DriftDetails = nil
		own(&mine.Status.ManifestConditions[0])
		if d := transformed(t, decoded(t, mine)); unsafe.SliceData(d.Status.ManifestConditions) == unsafe.SliceData(a.Status.ManifestConditions) {
			t.Errorf("a Work's %s is shared with a Work that has none", name)
		}
	}
	if sameConditions(a.Status.Conditions, b.Status.Conditions) {
		t.Error("conditions set at different times are one copy")
	}
	if cap(a.Status.Conditions) != len(a.Status.Conditions) {
		t.Errorf("a shared copy has room for %d conditions, holds %d", cap(a.Status.Conditions), len(a.Status.Conditions))
	}

	// The copy is made from the object's own; the object's is not written.
	own := []metav1.Condition{condition("Applied", strings.Clone("Applied"))}
	before := unsafe.StringData(own[0].Reason)
	shared := Conditions(own)
	if unsafe.StringData(own[0].Reason) != before || sameConditions(shared, own) {
		t.Error("sharing conditions changed the object's own slice")
	}
}

func TestTableForgetsWhatIsNotLookedUp(t *testing.T) {
	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	tb := newTable[*int]()
	tb.now = func() time.Time { return now }
	one, two := new(int), new(int)
	lookup := func(key string, v *int) *int { return tb.share([]byte(key), func() *int { return v }) }

	lookup("kept", one)
	lookup("dropped", one)
	for range 3 {
		now = now.Add(generation)
		if got := lookup("kept", two); got != one {
			t.Fatal("an entry looked up every generation was dropped")
		}
	}
	if got := lookup("dropped", two); got != two {
		t.Error("an entry not looked up for two generations was kept")
	}
}
