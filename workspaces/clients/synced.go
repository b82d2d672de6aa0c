package clients

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// syncWait bounds how long a read waits for the cache to sync; the
// reconcile then fails and is retried.
const syncWait = 30 * time.Second

// SyncedReader reads from c only once every informer c has started has
// synced. The kcp provider's per-workspace caches read their shared
// informers' stores as they are, synced or not: right after a hub restart
// a placement could be read before its bindings were, and be scheduled a
// second time onto the same clusters.
func SyncedReader(c cache.Cache) client.Reader { return syncedReader{c} }

type syncedReader struct{ cache cache.Cache }

func (r syncedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.synced(ctx); err != nil {
		return err
	}
	return r.cache.Get(ctx, key, obj, opts...)
}

func (r syncedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.synced(ctx); err != nil {
		return err
	}
	return r.cache.List(ctx, list, opts...)
}

func (r syncedReader) synced(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, syncWait)
	defer cancel()
	if !r.cache.WaitForCacheSync(ctx) {
		return fmt.Errorf("the hub's cache of the workspace has not synced within %s; retrying", syncWait)
	}
	return nil
}
