package server

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// watchRecorder is the storage under the decorator: it records the options
// of the last watch.
type watchRecorder struct {
	storage.Interface
	last   storage.ListOptions
	stream []string // the watch's stream key
}

func (r *watchRecorder) Watch(ctx context.Context, _ string, opts storage.ListOptions) (watch.Interface, error) {
	r.last = opts
	md, _ := metadata.FromOutgoingContext(ctx)
	r.stream = md.Get(watchStreamKey)
	return watch.NewFake(), nil
}

type fixedOptions struct{ recorder *watchRecorder }

func (f fixedOptions) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{Decorator: func(*storagebackend.ConfigForResource, string, func(context.Context, runtime.Object) (string, error),
		func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		return f.recorder, func() {}, nil
	}}, nil
}

func decorated(t *testing.T, newFunc func() runtime.Object) (storage.Interface, *watchRecorder) {
	t.Helper()
	recorder := &watchRecorder{}
	opts, err := bookmarkingStorage{fixedOptions{recorder}, nil}.GetRESTOptions(schema.GroupResource{Resource: "configmaps"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := opts.Decorator(nil, "", nil, newFunc, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, recorder
}

// A watch that asks for bookmarks asks etcd for progress notifications;
// one that does not, does not get them.
func TestWatchesAskingForBookmarksGetProgressNotifications(t *testing.T) {
	s, recorder := decorated(t, func() runtime.Object { return &metav1.Status{} })
	for _, bookmarks := range []bool{true, false} {
		if _, err := s.Watch(context.Background(), "/configmaps", storage.ListOptions{Predicate: storage.SelectionPredicate{AllowWatchBookmarks: bookmarks}}); err != nil {
			t.Fatal(err)
		}
		if recorder.last.ProgressNotify != bookmarks {
			t.Errorf("bookmarks asked %v: progress notifications %v", bookmarks, recorder.last.ProgressNotify)
		}
	}
}

// Storage that cannot make a bookmark (no empty object of its type) is left
// as it is: etcd's storage refuses progress notifications without one.
func TestStorageWithoutNewFuncIsLeftAlone(t *testing.T) {
	s, recorder := decorated(t, nil)
	if s != storage.Interface(recorder) {
		t.Fatalf("storage without newFunc was wrapped: %T", s)
	}
}

// Consecutive watches go on different etcd streams, and every watch goes on
// one of watchStreams.
func TestWatchesAreSpreadOverStreams(t *testing.T) {
	s, recorder := decorated(t, func() runtime.Object { return &metav1.Status{} })
	seen := map[string]bool{}
	for range 2 * watchStreams {
		if _, err := s.Watch(context.Background(), "/configmaps", storage.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(recorder.stream) != 1 {
			t.Fatalf("a watch's stream keys: %v, want one", recorder.stream)
		}
		seen[recorder.stream[0]] = true
	}
	if len(seen) != watchStreams {
		t.Errorf("%d watches went on %d streams, want %d", 2*watchStreams, len(seen), watchStreams)
	}
}
