package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

func etcdConfig(t *testing.T, servers []string, resource string) *storagebackend.ConfigForResource {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	json := codecs.SupportedMediaTypes()[0].Serializer
	codec := codecs.CodecForVersions(json, json, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
	c := storagebackend.NewDefaultConfig("/registry", codec)
	c.Transport.ServerList = servers
	return c.ForResource(schema.GroupResource{Resource: resource})
}

func openClients(s *sharedEtcdClients) int {
	n := 0
	for i := range s.slots {
		if s.slots[i].client != nil {
			n++
		}
	}
	return n
}

func newConfigMap() runtime.Object { return &corev1.ConfigMap{} }

// Many resources' storage goes over a few clients, a resource always over
// the same one, and the storage works.
func TestResourcesShareAFewEtcdClients(t *testing.T) {
	servers := testserver.RunEtcd(t, nil).Endpoints()
	clients := &sharedEtcdClients{}
	defer clients.Close()

	for i := range 40 {
		c := etcdConfig(t, servers, fmt.Sprintf("resource%d", i))
		if !clients.shareable(c) {
			t.Fatalf("storage of %s cannot share the clients", c.GroupResource)
		}
		if _, _, err := clients.newStorage(c, newConfigMap, nil, c.GroupResource.Resource); err != nil {
			t.Fatal(err)
		}
	}
	if n := openClients(clients); n > etcdClientCount || n < 2 {
		t.Fatalf("40 resources opened %d etcd clients, want 2 to %d", n, etcdClientCount)
	}
	c := etcdConfig(t, servers, "resource7")
	first, err := clients.client(c)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := clients.client(c); err != nil || first != again {
		t.Fatalf("one resource got two clients (%v)", err)
	}

	s, _, err := clients.newStorage(etcdConfig(t, servers, "configmaps"), newConfigMap, nil, "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	ctx := genericapirequest.WithCluster(context.Background(), genericapirequest.Cluster{Name: "team"})
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}, Data: map[string]string{"k": "v"}}
	if err := s.Create(ctx, "/configmaps/team/settings", in, &corev1.ConfigMap{}, 0); err != nil {
		t.Fatal(err)
	}
	out := &corev1.ConfigMap{}
	if err := s.Get(ctx, "/configmaps/team/settings", storage.GetOptions{}, out); err != nil {
		t.Fatal(err)
	}
	if out.Data["k"] != "v" {
		t.Fatalf("read back %v", out.Data)
	}

	clients.Close()
	if n := openClients(clients); n != 0 {
		t.Fatalf("%d clients open after Close", n)
	}
	if _, err := clients.client(c); err == nil {
		t.Fatal("a client was opened after Close")
	}
}

// Watches of resources sharing a client each get their own resource's
// events, bookmarks when they ask, and end when their storage is destroyed.
func TestWatchesOnSharedClients(t *testing.T) {
	servers := testserver.RunEtcd(t, nil).Endpoints()
	clients := &sharedEtcdClients{}
	defer clients.Close()
	getter := bookmarkingStorage{undecoratedOptions{}, clients}
	open := func(resource string) (storage.Interface, factory.DestroyFunc) {
		opts, err := getter.GetRESTOptions(schema.GroupResource{Resource: resource}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, destroy, err := opts.Decorator(etcdConfig(t, servers, resource), resource, nil, newConfigMap, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s, destroy
	}
	// Two resources on one client: find a second that hashes to the first's slot.
	first, destroyFirst := open("widgets")
	firstClient, _ := clients.client(etcdConfig(t, servers, "widgets"))
	second := ""
	for i := 0; second == ""; i++ {
		name := fmt.Sprintf("gadgets%d", i)
		if c, _ := clients.client(etcdConfig(t, servers, name)); c == firstClient {
			second = name
		}
	}
	other, destroyOther := open(second)
	defer destroyOther()

	ctx := genericapirequest.WithCluster(context.Background(), genericapirequest.Cluster{Name: "team"})
	everything := storage.ListOptions{Predicate: storage.Everything, ResourceVersion: "0"}
	w1, err := first.Watch(ctx, "/widgets/", storage.ListOptions{Predicate: storage.Everything, ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	everything.Recursive = true
	w2, err := other.Watch(ctx, "/"+second+"/", everything)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()

	for _, c := range []struct {
		s    storage.Interface
		key  string
		name string
	}{{first, "/widgets/team/a", "a"}, {other, "/" + second + "/team/b", "b"}} {
		in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: "team"}}
		if err := c.s.Create(ctx, c.key, in, &corev1.ConfigMap{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for w, want := range map[watch.Interface]string{w1: "a", w2: "b"} {
		select {
		case e := <-w.ResultChan():
			if got, ok := e.Object.(*corev1.ConfigMap); e.Type != watch.Added || !ok || got.Name != want {
				t.Fatalf("watch of %s got %s %v", want, e.Type, e.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event for %s", want)
		}
	}

	destroyFirst()
	select {
	case _, open := <-w1.ResultChan():
		for open {
			_, open = <-w1.ResultChan()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watch outlived its destroyed storage")
	}
	w1.Stop()
	// The other resource's watch, on the same client, goes on.
	if err := other.Create(ctx, "/"+second+"/team/c", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "team"}}, &corev1.ConfigMap{}, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w2.ResultChan():
		if got, ok := e.Object.(*corev1.ConfigMap); !ok || got.Name != "c" {
			t.Fatalf("got %s %v", e.Type, e.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other resource's watch ended with the destroyed storage")
	}
}

// undecoratedOptions is the API server's options without watch caches.
type undecoratedOptions struct{}

func (undecoratedOptions) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{Decorator: generic.UndecoratedStorage}, nil
}

// Storage for other etcd servers than the first storage's is not shared.
func TestOtherEtcdServersAreNotShared(t *testing.T) {
	clients := &sharedEtcdClients{}
	if !clients.shareable(etcdConfig(t, []string{"https://127.0.0.1:2379"}, "configmaps")) {
		t.Fatal("the first storage cannot share")
	}
	if clients.shareable(etcdConfig(t, []string{"https://127.0.0.1:2479"}, "secrets")) {
		t.Fatal("storage of another etcd shares the first one's clients")
	}
	if clients.shareable(nil) {
		t.Fatal("storage without a config shares")
	}
}

// Only the API server's storage without a watch cache is replaced.
func TestOnlyUndecoratedStorageIsReplaced(t *testing.T) {
	if !undecorated(generic.UndecoratedStorage) {
		t.Fatal("the API server's undecorated storage is not recognised")
	}
	other := func(*storagebackend.ConfigForResource, string, func(context.Context, runtime.Object) (string, error),
		func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		return nil, nil, nil
	}
	if undecorated(other) {
		t.Fatal("another decorator is taken for the undecorated storage")
	}
}
