package workapplier

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// memberWithCache is a member cluster whose cache can be behind its API
// server (GetAPIReader, and every write), or not synced yet.
type memberWithCache struct {
	cluster.Cluster
	cache    client.Reader
	unsynced bool
	// unserved is a version of example.com's kinds the member does not
	// serve; served, what its REST mapper knows of them.
	unserved string
	served   []schema.GroupVersionKind
	api      client.Client
	// apiReads counts the reads that went to the API server.
	apiReads int
}

type fakeCache struct {
	cache.Cache
	m *memberWithCache
}

func (c fakeCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	if c.m.isUnserved(obj) {
		return nil, noKindMatch(obj)
	}
	return &controllertest.FakeInformer{Synced: !c.m.unsynced}, nil
}

func (m *memberWithCache) isUnserved(obj client.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return m.unserved != "" && gvk.Group == "example.com" && gvk.Version == m.unserved
}

func (m *memberWithCache) GetRESTMapper() meta.RESTMapper {
	var versions []schema.GroupVersion
	for _, gvk := range m.served {
		versions = append(versions, gvk.GroupVersion())
	}
	mapper := meta.NewDefaultRESTMapper(versions)
	for _, gvk := range m.served {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	return mapper
}

func noKindMatch(obj client.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

func (c fakeCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.m.cache.Get(ctx, key, obj, opts...)
}

func (m *memberWithCache) GetCache() cache.Cache { return fakeCache{m: m} }

func (m *memberWithCache) GetClient() client.Client { return m.api }

func (m *memberWithCache) GetAPIReader() client.Reader {
	return countingReader{m}
}

type countingReader struct{ m *memberWithCache }

func (r countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.m.apiReads++
	if r.m.isUnserved(obj) {
		return noKindMatch(obj)
	}
	return r.m.api.Get(ctx, key, obj, opts...)
}

func (r countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.m.api.List(ctx, list, opts...)
}

func placedConfigMap(o owner, resourceVersion string, otherOwners ...metav1.OwnerReference) *unstructured.Unstructured {
	cm := object("ConfigMap", "app", "settings", map[string]string{
		placementv1beta1.OwnerAnnotation: o.identity, placementv1beta1.CreatedByAnnotation: o.identity,
	})
	cm.SetUID("uid-1")
	cm.SetResourceVersion(resourceVersion)
	cm.SetOwnerReferences(append([]metav1.OwnerReference{{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "AppliedWork", Name: "w", UID: "aw"}}, otherOwners...))
	return cm
}

var settingsID = placementv1beta1.WorkResourceIdentifier{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "app", Name: "settings"}

var deletedWork = &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "w-1"}}

func TestReleaseDecidesOnTheCacheAndAgainOnAConflict(t *testing.T) {
	o := ownerOf(teamWork(""))
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d"}
	movedTo := metav1.OwnerReference{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "AppliedWork", Name: "w-1", UID: "aw-1"}
	unplaced := placedConfigMap(o, "5")
	unplaced.SetAnnotations(nil)
	unplaced.SetOwnerReferences(nil)
	tests := []struct {
		name        string
		cached, api *unstructured.Unstructured
		unsynced    bool
		wantGone    bool
		wantPending bool
		wantOwners  []metav1.OwnerReference
		mode        releaseMode // deleteCreated unless set
		// wantBookkeeping: the placement's annotations stay.
		wantBookkeeping bool
		wantReads       int
	}{{
		name:   "the cache is current: deleted from it, without reading the API server",
		cached: placedConfigMap(o, "5"), api: placedConfigMap(o, "5"),
		wantGone: true, wantPending: true,
	}, {
		// Someone made the object theirs too after the cache last saw it:
		// deleting on the cache's word would lose their object.
		name:   "the cache is behind: the delete is refused and the fresh object kept",
		cached: placedConfigMap(o, "5"), api: placedConfigMap(o, "6", other),
		wantOwners: []metav1.OwnerReference{other}, wantReads: 1,
	}, {
		// Acting on a copy that is not ours writes nothing that a stale
		// copy would fail: it is read again.
		name:   "the cache shows a copy that is not the placement's: read from the API server",
		cached: unplaced, api: placedConfigMap(o, "6"), wantGone: true, wantPending: true, wantReads: 1,
	}, {
		name: "the cache has not seen it yet: read from the API server and deleted",
		api:  placedConfigMap(o, "5"), wantGone: true, wantPending: true, wantReads: 1,
	}, {
		name:   "the cache has not synced: read from the API server",
		cached: placedConfigMap(o, "5"), unsynced: true, api: placedConfigMap(o, "5"),
		wantGone: true, wantPending: true, wantReads: 1,
	}, {
		name:   "shared with another owner: kept, released",
		cached: placedConfigMap(o, "5", other), api: placedConfigMap(o, "5", other),
		wantOwners: []metav1.OwnerReference{other},
	}, {
		// It moved to another of the placement's Works, which is not
		// applied yet or goes after this one: that Work answers for it.
		name:   "held by another Work of the placement too: kept, with the placement's bookkeeping",
		cached: placedConfigMap(o, "5", movedTo), api: placedConfigMap(o, "5", movedTo),
		wantOwners: []metav1.OwnerReference{movedTo}, wantBookkeeping: true,
	}, {
		// The placement lets go of what it placed: no later Work of it may
		// delete the object.
		name:   "held by another Work of the placement, which lets go of it: kept, without the bookkeeping",
		cached: placedConfigMap(o, "5", movedTo), api: placedConfigMap(o, "5", movedTo), mode: keep,
		wantOwners: []metav1.OwnerReference{movedTo},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cached := fake.NewClientBuilder()
			if tt.cached != nil {
				cached = cached.WithObjects(tt.cached)
			}
			member := &memberWithCache{cache: cached.Build(), unsynced: tt.unsynced, api: fake.NewClientBuilder().WithObjects(tt.api).Build()}
			r := &Reconciler{Member: member}
			d, err := r.release(context.Background(), deletedWork, o, settingsID, tt.mode)
			if err != nil {
				t.Fatal(err)
			}
			if (d != nil) != tt.wantPending {
				t.Errorf("deleting = %v, want pending %v", d, tt.wantPending)
			}
			if member.apiReads != tt.wantReads {
				t.Errorf("%d reads from the API server, want %d", member.apiReads, tt.wantReads)
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
			err = member.api.Get(context.Background(), client.ObjectKey{Namespace: "app", Name: "settings"}, live)
			if tt.wantGone {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("the ConfigMap is still there: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := live.GetOwnerReferences(); len(got) != len(tt.wantOwners) || got[0].UID != tt.wantOwners[0].UID {
				t.Errorf("owners = %v, want %v", got, tt.wantOwners)
			}
			for _, a := range []string{placementv1beta1.OwnerAnnotation, placementv1beta1.CreatedByAnnotation} {
				if _, ok := live.GetAnnotations()[a]; ok != tt.wantBookkeeping {
					t.Errorf("%s kept = %v, want %v: %v", a, ok, tt.wantBookkeeping, live.GetAnnotations())
				}
			}
		})
	}
}

func TestReleaseTrustsTheCacheForWhatTheDeletedWorkDeleted(t *testing.T) {
	o := ownerOf(teamWork(""))
	deleting := placedConfigMap(o, "5")
	deleting.SetDeletionTimestamp(ptr.To(metav1.Now()))
	deleting.SetFinalizers([]string{"example.com/hold"})
	member := &memberWithCache{cache: fake.NewClientBuilder().WithObjects(deleting).Build(), api: fake.NewClientBuilder().WithObjects(deleting).Build()}
	r := &Reconciler{Member: member}

	d, err := r.release(context.Background(), deletedWork, o, settingsID, deleteCreated)
	if err != nil || d == nil || !d.cached || len(d.finalizers) != 1 || member.apiReads != 0 {
		t.Fatalf("an object being deleted is pending, from the cache: %+v, %v, %d reads from the API server", d, err, member.apiReads)
	}
	r.deletions.add(deletedWork, keyOf(settingsID))
	member.cache = fake.NewClientBuilder().Build()
	if d, err := r.release(context.Background(), deletedWork, o, settingsID, deleteCreated); err != nil || d != nil || member.apiReads != 0 {
		t.Errorf("once the cache no longer has it, it is gone: %+v, %v, %d reads from the API server", d, err, member.apiReads)
	}
	sameName := deletedWork.DeepCopy()
	sameName.UID = "w-2"
	if d, _ := r.release(context.Background(), sameName, o, settingsID, deleteCreated); d == nil || member.apiReads != 1 {
		t.Errorf("a later Work of the same name trusts the first one's deletions: %+v, %d reads from the API server", d, member.apiReads)
	}
	r.deletions.forget("w")
	if d, _ := r.release(context.Background(), deletedWork, o, settingsID, deleteCreated); d == nil || member.apiReads != 2 {
		t.Errorf("an object the Work did not see deleted is read from the API server when the cache misses it: %+v, %d reads", d, member.apiReads)
	}
}

func TestMemberReaderReadsWhatTheCacheMissesFromTheAPIServer(t *testing.T) {
	o := ownerOf(teamWork(""))
	member := &memberWithCache{cache: fake.NewClientBuilder().Build(), api: fake.NewClientBuilder().WithObjects(placedConfigMap(o, "5")).Build()}
	r := &Reconciler{Member: member}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	live, err := r.reader().get(context.Background(), gvk, client.ObjectKey{Namespace: "app", Name: "settings"})
	if err != nil || live == nil || member.apiReads != 1 {
		t.Fatalf("an object the cache has not seen is read from the API server (never created over): %v, %v, %d reads from the API server", live, err, member.apiReads)
	}
	if live, err := r.reader().get(context.Background(), gvk, client.ObjectKey{Namespace: "app", Name: "missing"}); live != nil || err != nil {
		t.Errorf("a missing object is nil: %v, %v", live, err)
	}
}

// A deleted Work whose kind the member does not serve (its CRD never came,
// or went with its objects) has nothing of that kind to let go of: its
// cleanup must not fail on it for ever. A kind still served at another
// version than the one recorded (a CRD upgrade dropped it) is released at
// the version served: its objects are still there.
func TestReleaseOfAVersionTheMemberDoesNotServe(t *testing.T) {
	o := ownerOf(teamWork(""))
	widget := placementv1beta1.WorkResourceIdentifier{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: "app", Name: "settings"}
	member := &memberWithCache{cache: fake.NewClientBuilder().Build(), api: fake.NewClientBuilder().Build(), unserved: "v1"}
	r := &Reconciler{Member: member}
	if d, err := r.release(context.Background(), deletedWork, o, widget, deleteCreated); err != nil || d != nil {
		t.Fatalf("release of a kind the member serves at no version = %+v, %v; want nothing to wait for", d, err)
	}
	if d, err := r.releaseFresh(context.Background(), deletedWork, o, widget, deleteCreated); err != nil || d != nil {
		t.Fatalf("releaseFresh of a kind the member serves at no version = %+v, %v; want nothing to wait for", d, err)
	}

	v2 := placedConfigMap(o, "5")
	v2.SetAPIVersion("example.com/v2")
	v2.SetKind("Widget")
	member = &memberWithCache{cache: fake.NewClientBuilder().WithObjects(v2.DeepCopy()).Build(), api: fake.NewClientBuilder().WithObjects(v2.DeepCopy()).Build(),
		unserved: "v1", served: []schema.GroupVersionKind{v2.GroupVersionKind()}}
	r = &Reconciler{Member: member}
	d, err := r.release(context.Background(), deletedWork, o, widget, deleteCreated)
	if err != nil || d == nil || d.id.Version != "v2" || d.cached {
		t.Fatalf("release of a Widget the member serves at v2 only = %+v, %v; want it deleted at v2, read from the API server", d, err)
	}
	gone := v2.DeepCopy()
	if err := member.api.Get(context.Background(), client.ObjectKeyFromObject(v2), gone); !apierrors.IsNotFound(err) {
		t.Errorf("the Widget created by the placement is still there: %v", err)
	}
}
