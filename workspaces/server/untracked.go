package server

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// untrackedStorage stores the objects of the untracked resources without
// their field-ownership records (metadata.managedFields). The API server
// builds them on every write; for objects that only the hub's controllers
// and the syncers write, and that nobody applies server-side, they detect
// no conflict, yet a Work's or binding's records are a third of what it
// keeps in etcd and every watcher decodes them again. Dropped where the
// object is stored, they cost no write of their own to clear (a new
// InternalMemberCluster was updated at once for that, a new Work by its
// syncer).
type untrackedStorage struct {
	generic.RESTOptionsGetter
	resources sets.Set[schema.GroupResource]
}

func (g untrackedStorage) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil || opts.Decorator == nil || !g.resources.Has(resource) {
		return opts, err
	}
	decorate := opts.Decorator
	opts.Decorator = func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(context.Context, runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorate(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, trigger, indexers)
		if err != nil {
			return s, destroy, err
		}
		return untrackedFields{s}, destroy, nil
	}
	return opts, nil
}

type untrackedFields struct {
	storage.Interface
}

func (s untrackedFields) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	dropManagedFields(obj)
	return s.Interface.Create(ctx, key, obj, out, ttl)
}

func (s untrackedFields) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	dropping := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		obj, ttl, err := tryUpdate(input, res)
		if err == nil {
			dropManagedFields(obj)
		}
		return obj, ttl, err
	}
	return s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, dropping, cachedExistingObject)
}

func dropManagedFields(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
}
