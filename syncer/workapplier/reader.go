package workapplier

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// memberReader reads the objects the syncer places: from the member cache,
// which the tracker's watches of the placed kinds fill, once a kind's
// informer has synced; from the API server otherwise. A cache miss is read
// from the API server too (but see forCreate): the cache may not have seen
// the object yet, and it holds only objects placements manage (the placed
// label), not one a placement may adopt. A placement must never write over,
// and so take over, an object it did not see. Objects read from the cache are written
// with their resourceVersion as a precondition, so that a stale copy is
// refused.
type memberReader struct {
	cache  cache.Cache
	direct client.Reader
}

// cached reads obj from the cache. synced tells whether the cache could
// answer at all: found is meaningful only then.
func (m memberReader) cached(ctx context.Context, key client.ObjectKey, obj *unstructured.Unstructured) (found, synced bool, err error) {
	informer, err := m.cache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil || !informer.HasSynced() {
		return false, false, err
	}
	err = m.cache.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return false, true, nil
	}
	return err == nil, err == nil, err
}

// fresh reads the object from the API server; nil if it does not exist.
func (m memberReader) fresh(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := m.direct.Get(ctx, key, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return obj, nil
}

// get reads the object from the cache if it has it, else from the API
// server; nil if it does not exist.
func (m memberReader) get(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	return m.lookup(ctx, gvk, key, false)
}

// forCreate reads the object as get does, but takes a miss in a synced
// cache as absent without asking the API server: the caller's next step
// must be a create, which fails on an object the cache has not seen yet.
// That saves a read for every new object a placement brings.
func (m memberReader) forCreate(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	return m.lookup(ctx, gvk, key, true)
}

func (m memberReader) lookup(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey, trustMiss bool) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	found, synced, err := m.cached(ctx, key, obj)
	switch {
	case err != nil:
		return nil, err
	case found:
		return obj, nil
	case synced && trustMiss:
		return nil, nil
	}
	return m.fresh(ctx, gvk, key)
}
