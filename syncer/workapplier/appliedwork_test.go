package workapplier

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestAppliedList(t *testing.T) {
	id := func(name string) placementv1beta1.WorkResourceIdentifier {
		return placementv1beta1.WorkResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: name}
	}
	record := func(name string, uid types.UID) placementv1beta1.AppliedResourceMeta {
		return placementv1beta1.AppliedResourceMeta{WorkResourceIdentifier: id(name), UID: uid}
	}
	applied := func(name string, uid types.UID) *manifest {
		live := &unstructured.Unstructured{}
		live.SetUID(uid)
		return &manifest{id: id(name), obj: &unstructured.Unstructured{}, live: live, applied: applyOutcome{ok: true}}
	}
	failed := func(name string) *manifest {
		return &manifest{id: id(name), obj: &unstructured.Unstructured{}}
	}
	previous := []placementv1beta1.AppliedResourceMeta{record("kept", "1"), record("failing", "2"), record("stale", "3")}
	ms := []*manifest{applied("kept", "1"), failed("failing"), applied("new", "4"), failed("never-applied")}

	for _, tc := range []struct {
		keepStale bool
		want      []placementv1beta1.AppliedResourceMeta
	}{
		{false, []placementv1beta1.AppliedResourceMeta{record("kept", "1"), record("failing", "2"), record("new", "4")}},
		// A stale object not let go of yet stays on record.
		{true, []placementv1beta1.AppliedResourceMeta{record("kept", "1"), record("failing", "2"), record("new", "4"), record("stale", "3")}},
	} {
		got := appliedList(previous, ms, tc.keepStale)
		if len(got) != len(tc.want) {
			t.Fatalf("keepStale=%v: got %v, want %v", tc.keepStale, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("keepStale=%v: entry %d is %v, want %v", tc.keepStale, i, got[i], tc.want[i])
			}
		}
	}
}

// An AppliedWork the cache has not seen yet (the Work's previous reconcile
// created it moments ago) is read from the API server, not an error.
func TestEnsureAppliedWorkTheCacheHasNotSeen(t *testing.T) {
	s := runtime.NewScheme()
	_ = placementv1beta1.AddToScheme(s)
	existing := &placementv1beta1.AppliedWork{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "uid-aw"}}
	member := &memberWithCache{cache: fake.NewClientBuilder().WithScheme(s).Build(), api: fake.NewClientBuilder().WithScheme(s).WithObjects(existing).Build()}
	r := &Reconciler{Member: cacheBehind{member}}
	aw, err := r.ensureAppliedWork(context.Background(), &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "fleet-member-m"}})
	if err != nil {
		t.Fatal(err)
	}
	if aw.UID != "uid-aw" {
		t.Errorf("AppliedWork UID = %q, want the existing one's", aw.UID)
	}
}

// cacheBehind is a member whose client reads from its cache and writes to
// its API server, as a manager's client does.
type cacheBehind struct{ *memberWithCache }

func (m cacheBehind) GetClient() client.Client { return cachedReads{m.api, m.cache} }

type cachedReads struct {
	client.Client
	cache client.Reader
}

func (c cachedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.cache.Get(ctx, key, obj, opts...)
}
