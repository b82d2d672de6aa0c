package workgenerator

import (
	"context"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/works"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

const workspace = logicalcluster.Name("2abc")

// home is a home of Work with a fake client; nothing else of it is used.
type home struct {
	cluster.Cluster
	c client.Client
}

func (h home) GetClient() client.Client { return h.c }

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...)
	if err := works.Index(context.Background(), withIndex{b}); err != nil {
		t.Fatal(err)
	}
	if err := placements.AddIndexes(context.Background(), withIndex{b}); err != nil {
		t.Fatal(err)
	}
	return b.Build()
}

// withIndex adds the indexes works.Index and placements.AddIndexes ask for
// to a fake client.
type withIndex struct{ b *fake.ClientBuilder }

func (i withIndex) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	i.b.WithIndex(obj, field, f)
	return nil
}

// binding is the binding of placement "web" (an RP's if namespace is set)
// to cluster m1, rolled out to snapshot web-3-snapshot.
func binding(namespace string) placementv1beta1.BindingObj {
	spec := placementv1beta1.ResourceBindingSpec{
		State: placementv1beta1.BindingStateBound, TargetCluster: "m1", ResourceSnapshotName: "web-3-snapshot",
		ApplyStrategy: &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeServerSideApply},
	}
	meta := metav1.ObjectMeta{Namespace: namespace, Name: "web-m1", Labels: map[string]string{placementv1beta1.PlacementTrackingLabel: "web"}}
	if namespace == "" {
		return &placementv1beta1.ClusterResourceBinding{ObjectMeta: meta, Spec: spec}
	}
	return &placementv1beta1.ResourceBinding{ObjectMeta: meta, Spec: spec}
}

// snapshotGroup returns resource snapshot index 3 of placement "web" split
// over n objects (the master first), each holding one manifest.
func snapshotGroup(namespace string, n int) []placementv1beta1.ResourceSnapshotObj {
	k := placements.Key{Namespace: namespace, Name: "web"}
	var out []placementv1beta1.ResourceSnapshotObj
	for sub := 0; sub < n; sub++ {
		s := k.NewResourceSnapshot()
		s.SetName("web-3-" + strconv.Itoa(sub))
		ann := map[string]string{placementv1beta1.SubindexOfResourceSnapshotAnnotation: strconv.Itoa(sub)}
		if sub == 0 {
			s.SetName("web-3-snapshot")
			ann = map[string]string{placementv1beta1.NumberOfResourceSnapshotsAnnotation: strconv.Itoa(n)}
		}
		s.SetLabels(map[string]string{placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.ResourceIndexLabel: "3"})
		s.SetAnnotations(ann)
		s.SetResourceSnapshotSpec(placementv1beta1.ResourceSnapshotSpec{SelectedResources: []placementv1beta1.ResourceContent{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg-` + strconv.Itoa(sub) + `","namespace":"app"}}`)}},
		}})
		out = append(out, s)
	}
	return out
}

func TestWorkNamesAndLabels(t *testing.T) {
	tests := []struct {
		name, namespace string
		sub             int
		wantName        string
	}{
		{"a CRP's first Work", "", 0, "2abc.web-work"},
		{"a CRP's further shard", "", 2, "2abc.web-2"},
		{"an RP's first Work", "app", 0, "2abc.app.web-work"},
		{"an RP's further shard", "app", 1, "2abc.app.web-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := binding(tc.namespace)
			s := snapshotGroup(tc.namespace, 3)[tc.sub]
			w := render(t, origin{workspace: workspace, binding: b}, tc.sub, s)

			if w.Name != tc.wantName || w.Namespace != "fleet-member-m1" {
				t.Errorf("Work = %s/%s, want fleet-member-m1/%s", w.Namespace, w.Name, tc.wantName)
			}
			wantLabels := map[string]string{
				placementv1beta1.WorkspaceLabel:                   "2abc",
				placementv1beta1.PlacementTrackingLabel:           "web",
				placementv1beta1.ParentBindingLabel:               "web-m1",
				placementv1beta1.ParentNamespaceLabel:             tc.namespace,
				placementv1beta1.ParentResourceSnapshotIndexLabel: "3",
			}
			if !reflect.DeepEqual(w.Labels, wantLabels) {
				t.Errorf("labels = %v, want %v", w.Labels, wantLabels)
			}
			if got := w.Annotations[placementv1beta1.ParentResourceSnapshotNameAnnotation]; got != "web-3-snapshot" {
				t.Errorf("parent snapshot annotation = %q, want web-3-snapshot", got)
			}
			if m := w.Spec.Workload.Manifests; len(m) != 1 || string(m[0].Raw) != string(s.GetResourceSnapshotSpec().SelectedResources[0].Raw) {
				t.Errorf("manifests = %v, want the snapshot's objects", m)
			}
			as := b.GetBindingSpec().ApplyStrategy
			if !reflect.DeepEqual(w.Spec.ApplyStrategy, as) || w.Spec.ApplyStrategy == as {
				t.Errorf("apply strategy = %+v, want a copy of the binding's %+v", w.Spec.ApplyStrategy, as)
			}
		})
	}
}

func TestApplyWritesOnlyChangedWork(t *testing.T) {
	want := func() *placementv1beta1.Work {
		return render(t, origin{workspace: workspace, binding: binding("")}, 0, snapshotGroup("", 1)[0])
	}
	tests := []struct {
		name      string
		existing  func(w *placementv1beta1.Work) // nil: there is no Work yet
		wantWrite bool
	}{
		{"a missing Work is created", nil, true},
		{"an equal Work is kept", func(*placementv1beta1.Work) {}, false},
		{"labels and annotations added by others do not count", func(w *placementv1beta1.Work) {
			w.Labels["kcp.io/extra"] = "x"
			w.Annotations = map[string]string{"kcp.io/cluster": "root-fleet", placementv1beta1.ParentResourceSnapshotNameAnnotation: "web-3-snapshot"}
		}, false},
		{"another spec is rewritten", func(w *placementv1beta1.Work) { w.Spec.ApplyStrategy = nil }, true},
		{"another snapshot index is rewritten", func(w *placementv1beta1.Work) {
			w.Labels[placementv1beta1.ParentResourceSnapshotIndexLabel] = "2"
		}, true},
		{"a lost annotation is rewritten", func(w *placementv1beta1.Work) { w.Annotations = nil }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := &Reconciler{Home: home{c: fakeClient(t)}}
			var existing *placementv1beta1.Work
			if tc.existing != nil {
				existing = want()
				tc.existing(existing)
				if err := r.Home.GetClient().Create(ctx, existing); err != nil {
					t.Fatal(err)
				}
			}
			rvBefore := ""
			if existing != nil {
				rvBefore = existing.ResourceVersion
			}

			got, wrote, err := r.apply(ctx, existing, want())
			if err != nil {
				t.Fatal(err)
			}
			if wrote != tc.wantWrite {
				t.Errorf("apply says written = %v, want %v", wrote, tc.wantWrite)
			}
			stored := &placementv1beta1.Work{}
			if err := r.Home.GetClient().Get(ctx, client.ObjectKeyFromObject(got), stored); err != nil {
				t.Fatal(err)
			}
			if written := stored.ResourceVersion != rvBefore; written != tc.wantWrite {
				t.Errorf("written = %v, want %v", written, tc.wantWrite)
			}
			w := want()
			if !reflect.DeepEqual(stored.Spec, w.Spec) || !contains(stored.Labels, w.Labels) || !contains(stored.Annotations, w.Annotations) {
				t.Errorf("stored Work = %+v, want it to match %+v", stored, w)
			}
			if tc.existing != nil && stored.Labels["kcp.io/extra"] != existing.Labels["kcp.io/extra"] {
				t.Errorf("labels of others were dropped: %v", stored.Labels)
			}
		})
	}
}

func TestApplyRefusesWorkOfAnotherBinding(t *testing.T) {
	w := render(t, origin{workspace: workspace, binding: binding("")}, 0, snapshotGroup("", 1)[0])
	earlier := w.DeepCopy()
	earlier.Labels[placementv1beta1.ParentBindingLabel] = "web-m1-earlier"
	// A ResourcePlacement "web" in namespace "app" would name its Work as a
	// ClusterResourcePlacement "app.web" does.
	clash := w.DeepCopy()
	clash.Labels[placementv1beta1.PlacementTrackingLabel] = "app.web"
	for _, c := range []struct {
		name     string
		existing *placementv1beta1.Work
		want     string
	}{
		{"the Work of an earlier binding of the placement", earlier, "of an earlier binding (web-m1-earlier) of this placement to the cluster is still being removed"},
		{"another placement's Work of the same name", clash, "belongs to another binding"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Reconciler{Home: home{c: fakeClient(t, c.existing)}}
			if _, _, err := r.apply(context.Background(), nil, w.DeepCopy()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("creating over an existing Work: err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

func TestExistingWorksAreTheBindingsOwn(t *testing.T) {
	o := origin{workspace: workspace, binding: binding("")}
	first, shard := render(t, o, 0, snapshotGroup("", 2)[0]), render(t, o, 1, snapshotGroup("", 2)[1])
	earlier := first.DeepCopy()
	earlier.Labels[placementv1beta1.ParentBindingLabel] = "web-m1-earlier"
	for _, c := range []struct {
		name     string
		existing []client.Object
		want     []string
	}{
		{"its first Work (by name) and a further shard (by index)", []client.Object{first, shard}, []string{first.Name, shard.Name}},
		{"a first Work left by an earlier binding", []client.Object{earlier, shard}, []string{shard.Name}},
		{"none", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Reconciler{Home: home{c: fakeClient(t, c.existing...)}}
			works, err := r.existingWorks(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range works {
				got = append(got, w.Name)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("existing Works = %v, want %v", got, c.want)
			}
		})
	}
}

func workNames(t *testing.T, c client.Client) []string {
	t.Helper()
	list := &placementv1beta1.WorkList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range list.Items {
		out = append(out, w.Namespace+"/"+w.Name)
	}
	sort.Strings(out)
	return out
}

// render is the Work of a shard without overrides.
func render(t *testing.T, o origin, sub int, s placementv1beta1.ResourceSnapshotObj) *placementv1beta1.Work {
	t.Helper()
	ws, err := o.works(sub, s, renderer{})
	if err != nil {
		t.Fatal(err)
	}
	return ws[0]
}

func TestSyncWorks(t *testing.T) {
	for kind, ns := range map[string]string{"CRP": "", "RP": "app"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			b := binding(ns)
			o := origin{workspace: workspace, binding: b}
			group := trusted{group: snapshotGroup(ns, 2), path: logicalcluster.NewPath("root:teams:a"),
				policy: &teampolicy.Policy{TakeOverNamespaces: []string{"legacy-*", "old"}, PodSecurity: teampolicy.LevelRestricted}}

			// A Work of a third shard from an earlier snapshot, and Works of
			// the same binding name in another workspace and in another
			// placement kind, which are not this binding's.
			stale := render(t, o, 2, snapshotGroup(ns, 3)[2])
			otherWS := render(t, origin{workspace: "3def", binding: b}, 0, snapshotGroup(ns, 1)[0])
			otherNamespace := "app"
			if ns == "app" {
				otherNamespace = ""
			}
			otherKind := render(t, origin{workspace: workspace, binding: binding(otherNamespace)}, 0, snapshotGroup(ns, 1)[0])
			r := &Reconciler{Home: home{c: fakeClient(t, stale, otherWS, otherKind)}}

			works, written, err := r.syncWorks(ctx, o, group, overrides.Set{})
			if err != nil || !written {
				t.Fatalf("syncWorks: written = %v, err = %v; want Works written", written, err)
			}
			for _, w := range works {
				wantAnn := map[string]string{placementv1beta1.WorkspacePathAnnotation: "root:teams:a",
					placementv1beta1.TenantAnnotation: "true", placementv1beta1.TakeOverNamespacesAnnotation: "legacy-*,old",
					placementv1beta1.PodSecurityAnnotation: "restricted"}
				if !contains(w.Annotations, wantAnn) {
					t.Errorf("Work %s annotations = %v, want %v", w.Name, w.Annotations, wantAnn)
				}
			}
			prefix := map[string]string{"": "2abc.web", "app": "2abc.app.web"}[ns]
			if len(works) != 2 || works[0].Name != prefix+"-work" || works[1].Name != prefix+"-1" {
				t.Fatalf("synced Works = %v", works)
			}
			want := []string{"fleet-member-m1/" + otherWS.Name, "fleet-member-m1/" + otherKind.Name, "fleet-member-m1/" + prefix + "-1", "fleet-member-m1/" + prefix + "-work"}
			sort.Strings(want)
			if got := workNames(t, r.Home.GetClient()); !reflect.DeepEqual(got, want) {
				t.Errorf("Works = %v, want %v", got, want)
			}

			// Synced again with nothing changed, no Work is written.
			again, written, err := r.syncWorks(ctx, o, group, overrides.Set{})
			if err != nil || written {
				t.Fatalf("syncWorks again: written = %v, err = %v; want nothing written", written, err)
			}
			for i := range again {
				if again[i].ResourceVersion != works[i].ResourceVersion {
					t.Errorf("Work %s was rewritten", again[i].Name)
				}
			}
		})
	}
}

func TestPlacedOnce(t *testing.T) {
	cm := func(name, data string) placementv1beta1.Manifest {
		return placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"app"},"data":{"k":"` + data + `"}}`)}}
	}
	work := func(envelope string, manifests ...placementv1beta1.Manifest) *placementv1beta1.Work {
		w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
		if envelope != "" {
			w.Labels[placementv1beta1.EnvelopeTypeLabel] = string(placementv1beta1.ResourceEnvelopeType)
			w.Labels[placementv1beta1.EnvelopeNamespaceLabel] = "app"
			w.Labels[placementv1beta1.EnvelopeNameLabel] = envelope
		}
		w.Spec.Workload.Manifests = manifests
		return w
	}
	generated := placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"job-","namespace":"app"}}`)}}
	tests := []struct {
		name  string
		works []*placementv1beta1.Work
		want  string
	}{
		{"distinct objects", []*placementv1beta1.Work{work("", cm("a", "1")), work("env", cm("b", "1"))}, ""},
		{"selected and enveloped", []*placementv1beta1.Work{work("", cm("a", "1")), work("env", cm("a", "2"))},
			"ConfigMap app/a is placed twice, by the resource selectors and by ResourceEnvelope app/env"},
		{"twice in one envelope", []*placementv1beta1.Work{work("env", cm("a", "1"), cm("a", "2"))},
			"ConfigMap app/a is placed twice, by ResourceEnvelope app/env and by ResourceEnvelope app/env"},
		{"two with generateName alone: the member reports each", []*placementv1beta1.Work{work("env", generated, generated)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := placedOnce(tt.works)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("placedOnce = %v, want %q", err, tt.want)
			}
		})
	}
}

// A shard dropped and wanted again before its member let its Work go: no
// Work of the binding is written until that one is gone (the others would
// otherwise drop objects nothing then holds).
func TestSyncWorksWaitsForAWantedWorkStillBeingRemoved(t *testing.T) {
	ctx := context.Background()
	o := origin{workspace: workspace, binding: binding("")}
	group := trusted{group: snapshotGroup("", 2), path: logicalcluster.NewPath("root:teams:a")}
	first := render(t, o, 0, group.group[0])
	first.Spec.Workload.Manifests = nil
	removing := render(t, o, 1, group.group[1])
	removing.Finalizers = []string{placementv1beta1.WorkFinalizer}
	removing.DeletionTimestamp = &metav1.Time{Time: metav1.Now().Time}
	r := &Reconciler{Home: home{c: fakeClient(t, first, removing)}}
	before := &placementv1beta1.Work{}
	if err := r.Home.GetClient().Get(ctx, client.ObjectKeyFromObject(first), before); err != nil {
		t.Fatal(err)
	}

	_, _, err := r.syncWorks(ctx, o, group, overrides.Set{})
	if err == nil || !strings.Contains(err.Error(), removing.Name+" is still being removed") {
		t.Fatalf("syncWorks with a wanted Work still being removed: %v", err)
	}
	after := &placementv1beta1.Work{}
	if err := r.Home.GetClient().Get(ctx, client.ObjectKeyFromObject(first), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("Work %s was written while %s was still being removed", first.Name, removing.Name)
	}
}
