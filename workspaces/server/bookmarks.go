package server

import (
	"context"
	"strconv"
	"sync/atomic"

	"google.golang.org/grpc/metadata"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// bookmarkingStorage serves watches straight from etcd (the API server runs
// without watch caches, docs/performance.md) with bookmarks: a watch that
// asks for them gets etcd's progress notifications as bookmarks, so its
// client's resource version keeps up while nothing it watches changes.
// Without them an informer of a quiet resource keeps the version of its
// first list, and every time its watch times out (each 5 to 10 minutes) it
// watches again from there: etcd then reads and decodes every write made
// since, of every resource, to catch the new watch up — on an idle hub with
// three members, 40 % of everything it allocated.
//
// With clients, storage the API server would give an etcd client of its own
// is made on the shared ones instead (sharedEtcdClients).
type bookmarkingStorage struct {
	generic.RESTOptionsGetter
	clients *sharedEtcdClients
}

func (g bookmarkingStorage) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil || opts.Decorator == nil {
		return opts, err
	}
	decorate := g.clients.decorator(opts.Decorator)
	opts.Decorator = func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(context.Context, runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorate(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, trigger, indexers)
		// A bookmark is an empty object of the resource's type.
		if err != nil || newFunc == nil {
			return s, destroy, err
		}
		return progressNotifyingStorage{s}, destroy, nil
	}
	return opts, nil
}

type progressNotifyingStorage struct {
	storage.Interface
}

// Watch asks etcd for progress notifications when the client asked for
// bookmarks; the API server passes the notifications on as bookmarks, and
// to no one else. Each watch goes on the next of watchStreams streams.
func (s progressNotifyingStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	if opts.Predicate.AllowWatchBookmarks {
		opts.ProgressNotify = true
	}
	return s.Interface.Watch(onWatchStream(ctx, nextWatchStream.Add(1)), key, opts)
}

// watchStreams is how many gRPC streams the API server's watches are spread
// over on each etcd client (up to 8 x 64 in all, a stream being opened only
// while it has a watch). An etcd client puts all watches of the same request metadata on one
// stream, and etcd answers each stream through a 128-response buffer that
// the loop sending the stream's progress notifications also drains: once a
// minute it offers one to every quiet watch of the stream and drops those
// that do not fit. On the 8 shared clients (sharedEtcdClients) a hub with
// 1,000 members had ~1,200 watches, the members' 1,000 watches of their
// Works on one stream: most quiet watches never got a bookmark, and each
// time one of them was started again etcd read back and decoded every
// write since its first list (a quarter to half of what the loaded hub
// allocated at rest, docs/performance.md). At 64 streams a stream holds a
// few dozen watches.
const watchStreams = 64

// watchStreamKey is the request metadata that tells the streams apart;
// etcd ignores it.
const watchStreamKey = "fleet-watch-stream"

var nextWatchStream atomic.Uint32

// onWatchStream puts the watches of ctx on stream n (modulo watchStreams).
func onWatchStream(ctx context.Context, n uint32) context.Context {
	return metadata.AppendToOutgoingContext(ctx, watchStreamKey, strconv.Itoa(int(n%watchStreams)))
}
