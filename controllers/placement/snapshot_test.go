package placement

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

func fakeClient(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).Build()
}

func newCRP(name string) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "crp-uid", Generation: 1}}
}

func newRP(namespace, name string) *placementv1beta1.ResourcePlacement {
	return &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: "rp-uid", Generation: 1}}
}

// configMap is a selected object; data makes its content (and size) differ.
func configMap(name, data string) *unstructured.Unstructured {
	return object("v1", "ConfigMap", "app", name, map[string]any{"data": map[string]any{"k": data}})
}

func resourceSnapshots(t *testing.T, c client.Client, p placementv1beta1.PlacementObj) map[string]placementv1beta1.ResourceSnapshotObj {
	t.Helper()
	snaps, err := placements.ResourceSnapshots(context.Background(), c, placements.KeyOf(p), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]placementv1beta1.ResourceSnapshotObj{}
	for _, s := range snaps {
		out[s.GetName()] = s
	}
	return out
}

func policySnapshots(t *testing.T, c client.Client, p placementv1beta1.PlacementObj) map[string]placementv1beta1.PolicySnapshotObj {
	t.Helper()
	snaps, err := placements.PolicySnapshots(context.Background(), c, placements.KeyOf(p), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]placementv1beta1.PolicySnapshotObj{}
	for _, s := range snaps {
		out[s.GetName()] = s
	}
	return out
}

func sortedNames[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// expectMeta checks the given labels and annotations (a want of "" means
// the key must be absent).
func expectMeta(t *testing.T, o client.Object, labels, annotations map[string]string) {
	t.Helper()
	for what, pair := range map[string][2]map[string]string{"label": {o.GetLabels(), labels}, "annotation": {o.GetAnnotations(), annotations}} {
		got, want := pair[0], pair[1]
		for k, v := range want {
			if g, ok := got[k]; g != v || (v == "" && ok) {
				t.Errorf("%s: %s %s = %q, want %q", o.GetName(), what, k, g, v)
			}
		}
	}
}

func TestEncodeIsDeterministic(t *testing.T) {
	a := configMap("a", "1")
	// The same object with its fields set in another order.
	b := &unstructured.Unstructured{Object: map[string]any{
		"data": map[string]any{"k": "1"}, "metadata": map[string]any{"name": "a", "namespace": "app"}, "kind": "ConfigMap", "apiVersion": "v1",
	}}
	raws1, hash1, err := encode([]*unstructured.Unstructured{a, configMap("b", "2")})
	if err != nil {
		t.Fatal(err)
	}
	raws2, hash2, _ := encode([]*unstructured.Unstructured{b, configMap("b", "2")})
	if hash1 != hash2 || !reflect.DeepEqual(raws1, raws2) {
		t.Errorf("equal selections encode differently: %s vs %s", hash1, hash2)
	}
	if _, changed, _ := encode([]*unstructured.Unstructured{a, configMap("b", "3")}); changed == hash1 {
		t.Errorf("changed content kept hash %s", hash1)
	}
	if _, reordered, _ := encode([]*unstructured.Unstructured{configMap("b", "2"), a}); reordered == hash1 {
		t.Errorf("the hash ignores the order, which sorted() fixes")
	}
	if _, empty, _ := encode(nil); empty == "" || empty == hash1 {
		t.Errorf("empty selection hash = %q", empty)
	}
}

func TestEncodeRefusesObjectsTooLargeToPlace(t *testing.T) {
	blob := func(n int) *unstructured.Unstructured {
		o := object("example.com/v1", "Blob", "app", "big", nil)
		o.Object["data"] = strings.Repeat("x", n)
		return o
	}
	if _, _, err := encode([]*unstructured.Unstructured{blob(maxObjectBytes - 1024)}); err != nil {
		t.Fatalf("an object just under the limit: %v", err)
	}
	_, _, err := encode([]*unstructured.Unstructured{blob(10), blob(maxObjectBytes)})
	if !errors.Is(err, errInvalidSelectors) || !strings.Contains(err.Error(), "Blob app/big is 1521 KiB, too large to place") {
		t.Fatalf("an object over the limit: %v; want an invalid-selectors error naming it", err)
	}
}

func repeat(size, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}

func TestShard(t *testing.T) {
	const limit = snapshotShardLimit
	tests := []struct {
		name  string
		sizes []int
		want  [][]int
	}{
		{"no objects still make one (empty) shard", nil, [][]int{nil}},
		{"small objects share a shard", []int{100, 200, 300}, [][]int{{100, 200, 300}}},
		{"exactly the limit fits", []int{limit / 2, limit / 2}, [][]int{{limit / 2, limit / 2}}},
		{"one byte over starts a new shard", []int{limit / 2, limit/2 + 1}, [][]int{{limit / 2}, {limit/2 + 1}}},
		{"an oversize object gets its own shard", []int{100, limit + 1, 100}, [][]int{{100}, {limit + 1}, {100}}},
		{"an oversize object first", []int{2 * limit, 10, 20}, [][]int{{2 * limit}, {10, 20}}},
		{"shards fill in order", []int{300 << 10, 300 << 10, 300 << 10, 300 << 10, 300 << 10}, [][]int{{300 << 10, 300 << 10}, {300 << 10, 300 << 10}, {300 << 10}}},
		{"many small objects are split by count", repeat(10, 2*snapshotShardObjects+1), [][]int{repeat(10, snapshotShardObjects), repeat(10, snapshotShardObjects), {10}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raws := make([][]byte, len(tc.sizes))
			for i, n := range tc.sizes {
				raws[i] = make([]byte, n)
			}
			var got [][]int
			for _, s := range shard(raws) {
				var sizes []int
				for _, r := range s {
					sizes = append(sizes, len(r))
				}
				got = append(got, sizes)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("shard sizes = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEnsureResourceSnapshot(t *testing.T) {
	for _, p := range []placementv1beta1.PlacementObj{newCRP("web"), newRP("app", "web")} {
		t.Run(placements.KeyOf(p).String(), func(t *testing.T) {
			ctx, r, c := context.Background(), &Reconciler{}, fakeClient(t)
			first := []*unstructured.Unstructured{configMap("a", "1"), object("placement.kubernetes-fleet.io/v1beta1", "ResourceEnvelope", "app", "env", nil)}
			_, hash, _ := encode(first)

			s0, err := r.ensureResourceSnapshot(ctx, c, p, first)
			if err != nil {
				t.Fatal(err)
			}
			if s0.GetName() != "web-0-snapshot" || s0.GetNamespace() != p.GetNamespace() {
				t.Fatalf("first snapshot = %s/%s, want %s/web-0-snapshot", s0.GetNamespace(), s0.GetName(), p.GetNamespace())
			}
			expectMeta(t, s0,
				map[string]string{placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.ResourceIndexLabel: "0", placementv1beta1.IsLatestSnapshotLabel: "true"},
				map[string]string{
					placementv1beta1.ResourceGroupHashAnnotation: hash, placementv1beta1.NumberOfResourceSnapshotsAnnotation: "1",
					placementv1beta1.NumberOfEnvelopedObjectsAnnotation: "1", placementv1beta1.SubindexOfResourceSnapshotAnnotation: "",
				})
			if refs := s0.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != p.GetUID() || !ptr.Deref(refs[0].Controller, false) {
				t.Errorf("owner references = %+v, want the placement as controller", refs)
			}
			if got := len(s0.GetResourceSnapshotSpec().SelectedResources); got != 2 {
				t.Errorf("snapshot holds %d objects, want 2", got)
			}

			again, err := r.ensureResourceSnapshot(ctx, c, p, []*unstructured.Unstructured{configMap("a", "1"), first[1]})
			if err != nil {
				t.Fatal(err)
			}
			if again.GetName() != "web-0-snapshot" || again.GetResourceVersion() != s0.GetResourceVersion() {
				t.Errorf("unchanged content returned %s (rv %s), want web-0-snapshot untouched", again.GetName(), again.GetResourceVersion())
			}
			if names := sortedNames(resourceSnapshots(t, c, p)); len(names) != 1 {
				t.Errorf("unchanged content made snapshots %v", names)
			}

			s1, err := r.ensureResourceSnapshot(ctx, c, p, []*unstructured.Unstructured{configMap("a", "2")})
			if err != nil {
				t.Fatal(err)
			}
			if s1.GetName() != "web-1-snapshot" {
				t.Fatalf("changed content made %s, want web-1-snapshot", s1.GetName())
			}
			snaps := resourceSnapshots(t, c, p)
			expectMeta(t, snaps["web-0-snapshot"], map[string]string{placementv1beta1.IsLatestSnapshotLabel: "false"}, nil)
			expectMeta(t, snaps["web-1-snapshot"],
				map[string]string{placementv1beta1.IsLatestSnapshotLabel: "true", placementv1beta1.ResourceIndexLabel: "1"},
				map[string]string{placementv1beta1.NumberOfEnvelopedObjectsAnnotation: "0"})
			if latest, err := placements.LatestResourceSnapshot(ctx, c, placements.KeyOf(p)); err != nil || latest.GetName() != "web-1-snapshot" {
				t.Errorf("latest snapshot = %v, %v", latest, err)
			}
		})
	}
}

func TestEnsureResourceSnapshotKeepsRevisionHistoryLimit(t *testing.T) {
	ctx, r, c := context.Background(), &Reconciler{}, fakeClient(t)
	p := newCRP("web")
	p.Spec.RevisionHistoryLimit = ptr.To[int32](2)
	for i, data := range []string{"0", "1", "2", "3", "4"} { // a first selection and four changes
		if _, err := r.ensureResourceSnapshot(ctx, c, p, []*unstructured.Unstructured{configMap("a", data)}); err != nil {
			t.Fatalf("selection %d: %v", i, err)
		}
	}
	snaps := resourceSnapshots(t, c, p)
	if got, want := sortedNames(snaps), []string{"web-3-snapshot", "web-4-snapshot"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshots = %v, want %v", got, want)
	}
	expectMeta(t, snaps["web-3-snapshot"], map[string]string{placementv1beta1.IsLatestSnapshotLabel: "false"}, nil)
	expectMeta(t, snaps["web-4-snapshot"], map[string]string{placementv1beta1.IsLatestSnapshotLabel: "true"}, nil)
}

func TestEnsureResourceSnapshotShardsLargeSelections(t *testing.T) {
	ctx, r, c := context.Background(), &Reconciler{}, fakeClient(t)
	p := newCRP("web")
	var objs []*unstructured.Unstructured
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} { // 7 x 300 KiB: two per shard
		objs = append(objs, configMap(name, strings.Repeat(name, 300<<10)))
	}
	raws, _, _ := encode(objs)

	master, err := r.ensureResourceSnapshot(ctx, c, p, objs)
	if err != nil {
		t.Fatal(err)
	}
	snaps := resourceSnapshots(t, c, p)
	if got, want := sortedNames(snaps), []string{"web-0-1", "web-0-2", "web-0-3", "web-0-snapshot"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshots = %v, want %v", got, want)
	}
	expectMeta(t, master, map[string]string{placementv1beta1.IsLatestSnapshotLabel: "true"},
		map[string]string{placementv1beta1.NumberOfResourceSnapshotsAnnotation: "4"})
	for _, sub := range []string{"1", "2", "3"} {
		expectMeta(t, snaps["web-0-"+sub],
			map[string]string{placementv1beta1.ResourceIndexLabel: "0", placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.IsLatestSnapshotLabel: ""},
			map[string]string{placementv1beta1.SubindexOfResourceSnapshotAnnotation: sub})
	}

	// Read back in subindex order, the shards hold the selection in order.
	group, err := placements.ResourceSnapshotGroup(ctx, c, placements.KeyOf(p), master.GetName())
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, s := range group {
		for _, res := range s.GetResourceSnapshotSpec().SelectedResources {
			got = append(got, res.Raw)
		}
	}
	if !reflect.DeepEqual(got, raws) {
		t.Errorf("the snapshot group does not hold the selection in order (%d of %d objects)", len(got), len(raws))
	}
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(n)}
}

func withAffinity(p *placementv1beta1.PlacementPolicy, labels map[string]string) *placementv1beta1.PlacementPolicy {
	p.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
			{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}},
		}},
	}}
	return p
}

func TestEnsurePolicySnapshot(t *testing.T) {
	ctx, r, c := context.Background(), &Reconciler{}, fakeClient(t)
	p := newCRP("web")
	p.Spec.Policy = pickN(2)
	ensure := func(wantName string) placementv1beta1.PolicySnapshotObj {
		t.Helper()
		s, err := r.ensurePolicySnapshot(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if s.GetName() != wantName {
			t.Fatalf("policy snapshot = %s, want %s", s.GetName(), wantName)
		}
		return s
	}

	s0 := ensure("web-0")
	expectMeta(t, s0,
		map[string]string{placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.PolicyIndexLabel: "0", placementv1beta1.IsLatestSnapshotLabel: "true"},
		map[string]string{placementv1beta1.NumberOfClustersAnnotation: "2", placementv1beta1.CRPGenerationAnnotation: "1"})
	spec := s0.GetPolicySnapshotSpec()
	if spec.Policy.NumberOfClusters != nil || spec.Policy.PlacementType != placementv1beta1.PickNPlacementType || len(spec.PolicyHash) == 0 {
		t.Errorf("policy snapshot spec = %+v, want PickN without numberOfClusters, and a hash", spec)
	}

	// Scaling only updates the count on the latest snapshot.
	p.Spec.Policy, p.Generation = pickN(3), 2
	s0 = ensure("web-0")
	expectMeta(t, s0, nil, map[string]string{placementv1beta1.NumberOfClustersAnnotation: "3", placementv1beta1.CRPGenerationAnnotation: "2"})
	if names := sortedNames(policySnapshots(t, c, p)); !reflect.DeepEqual(names, []string{"web-0"}) {
		t.Errorf("scaling made policy snapshots %v", names)
	}

	// A new policy is a new snapshot.
	p.Spec.Policy, p.Generation = withAffinity(pickN(3), map[string]string{"region": "eu"}), 3
	ensure("web-1")
	snaps := policySnapshots(t, c, p)
	expectMeta(t, snaps["web-0"], map[string]string{placementv1beta1.IsLatestSnapshotLabel: "false"}, nil)
	expectMeta(t, snaps["web-1"],
		map[string]string{placementv1beta1.IsLatestSnapshotLabel: "true", placementv1beta1.PolicyIndexLabel: "1"},
		map[string]string{placementv1beta1.NumberOfClustersAnnotation: "3", placementv1beta1.CRPGenerationAnnotation: "3"})
	if !reflect.DeepEqual(snaps["web-1"].GetPolicySnapshotSpec().Policy.Affinity, p.Spec.Policy.Affinity) {
		t.Errorf("snapshot policy does not carry the affinity")
	}

	// The same policy again changes nothing.
	rv := snaps["web-1"].GetResourceVersion()
	if s := ensure("web-1"); s.GetResourceVersion() != rv {
		t.Errorf("an unchanged policy rewrote its snapshot")
	}
}

func TestEnsurePolicySnapshotPolicies(t *testing.T) {
	tests := []struct {
		name      string
		policy    *placementv1beta1.PlacementPolicy
		wantType  placementv1beta1.PlacementType
		wantCount string // "" for no annotation
	}{
		{"no policy is PickAll", nil, placementv1beta1.PickAllPlacementType, ""},
		{"an empty type is PickAll", &placementv1beta1.PlacementPolicy{}, placementv1beta1.PickAllPlacementType, ""},
		{"PickAll has no count", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType}, placementv1beta1.PickAllPlacementType, ""},
		{"PickN counts numberOfClusters", pickN(5), placementv1beta1.PickNPlacementType, "5"},
		{"PickFixed counts clusterNames", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{"a", "b", "c"}},
			placementv1beta1.PickFixedPlacementType, "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newCRP("web")
			p.Spec.Policy = tc.policy
			s, err := (&Reconciler{}).ensurePolicySnapshot(context.Background(), fakeClient(t), p)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.GetPolicySnapshotSpec().Policy.PlacementType; got != tc.wantType {
				t.Errorf("placement type = %s, want %s", got, tc.wantType)
			}
			expectMeta(t, s, nil, map[string]string{placementv1beta1.NumberOfClustersAnnotation: tc.wantCount})
		})
	}
}

func TestEnsurePolicySnapshotKeepsRevisionHistoryLimit(t *testing.T) {
	ctx, r, c := context.Background(), &Reconciler{}, fakeClient(t)
	p := newRP("app", "web")
	p.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	for _, region := range []string{"eu", "us", "asia"} {
		p.Spec.Policy = withAffinity(pickN(1), map[string]string{"region": region})
		if _, err := r.ensurePolicySnapshot(ctx, c, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := sortedNames(policySnapshots(t, c, p)); !reflect.DeepEqual(got, []string{"web-2"}) {
		t.Errorf("policy snapshots = %v, want [web-2]", got)
	}
}
