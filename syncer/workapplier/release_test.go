package workapplier

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// memberWithCache is a member cluster whose cache (reads of GetClient) can
// be behind its API server (GetAPIReader, and every write).
type memberWithCache struct {
	cluster.Cluster
	cache client.Reader
	api   client.Client
	// apiReads counts the reads that went to the API server.
	apiReads int
}

type cachedClient struct {
	client.Client
	cache client.Reader
}

func (c cachedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.cache.Get(ctx, key, obj, opts...)
}

func (m *memberWithCache) GetClient() client.Client {
	return cachedClient{Client: m.api, cache: m.cache}
}

func (m *memberWithCache) GetAPIReader() client.Reader {
	m.apiReads++
	return m.api
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

func TestReleaseDecidesOnTheCacheAndAgainOnAConflict(t *testing.T) {
	o := ownerOf(teamWork(""))
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d"}
	tests := []struct {
		name        string
		cached, api *unstructured.Unstructured
		wantGone    bool
		wantPending bool
		wantOwners  []metav1.OwnerReference
		wantReads   int
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
		name: "the cache has not seen it yet: read from the API server and deleted",
		api:  placedConfigMap(o, "5"), wantGone: true, wantPending: true, wantReads: 1,
	}, {
		name:   "shared with another owner: kept, released",
		cached: placedConfigMap(o, "5", other), api: placedConfigMap(o, "5", other),
		wantOwners: []metav1.OwnerReference{other},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := fake.NewClientBuilder()
			if tt.cached != nil {
				cache = cache.WithObjects(tt.cached)
			}
			member := &memberWithCache{cache: cache.Build(), api: fake.NewClientBuilder().WithObjects(tt.api).Build()}
			r := &Reconciler{Member: member}
			d, err := r.release(context.Background(), "w", o, settingsID, deleteCreated)
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
			if _, ok := live.GetAnnotations()[placementv1beta1.OwnerAnnotation]; ok {
				t.Errorf("the released object keeps the placement's bookkeeping: %v", live.GetAnnotations())
			}
		})
	}
}

// failingReader fails every read: the API server must not be asked.
type failingReader struct{ client.Client }

func (failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("read from the API server")
}

func TestReleaseTrustsTheCacheForWhatTheDeletedWorkDeleted(t *testing.T) {
	o := ownerOf(teamWork(""))
	deleting := placedConfigMap(o, "5")
	deleting.SetDeletionTimestamp(ptr.To(metav1.Now()))
	deleting.SetFinalizers([]string{"example.com/hold"})
	member := &memberWithCache{cache: fake.NewClientBuilder().WithObjects(deleting).Build(), api: failingReader{}}
	r := &Reconciler{Member: member}

	d, err := r.release(context.Background(), "w", o, settingsID, deleteCreated)
	if err != nil || d == nil || !d.cached || len(d.finalizers) != 1 {
		t.Fatalf("an object being deleted is pending, from the cache: %+v, %v", d, err)
	}
	r.deletions.add("w", keyOf(settingsID))
	member.cache = fake.NewClientBuilder().Build()
	if d, err := r.release(context.Background(), "w", o, settingsID, deleteCreated); err != nil || d != nil {
		t.Errorf("once the cache no longer has it, it is gone: %+v, %v", d, err)
	}
	r.deletions.forget("w")
	if _, err := r.release(context.Background(), "w", o, settingsID, deleteCreated); err == nil {
		t.Error("an object this Work did not see deleted is read from the API server when the cache misses it")
	}
}
