/*
Copyright 2026 The Fleetplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cache

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func configMap(cluster, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", ResourceVersion: "1",
		Annotations: map[string]string{logicalcluster.AnnotationKey: cluster},
	}}
}

// recorder records the names of the objects a handler was given.
type recorder struct {
	lock  sync.Mutex
	names []string
}

func (r *recorder) add(prefix string, obj interface{}) {
	r.lock.Lock()
	defer r.lock.Unlock()
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	r.names = append(r.names, prefix+obj.(*corev1.ConfigMap).Name)
}

func (r *recorder) seen() []string {
	r.lock.Lock()
	defer r.lock.Unlock()
	return append([]string(nil), r.names...)
}

func (r *recorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { r.add("add:", obj) },
		UpdateFunc: func(_, obj interface{}) { r.add("update:", obj) },
		DeleteFunc: func(obj interface{}) { r.add("delete:", obj) },
	}
}

func waitFor(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return len(r.seen()) >= len(want), nil
	})
	got := r.seen()
	if err != nil || len(got) != len(want) {
		t.Fatalf("handler saw %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("handler saw %v, want %v", got, want)
		}
	}
}

func TestDispatchedHandlersSeeTheirClusterOnly(t *testing.T) {
	changes := watch.NewFake()
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{Items: []corev1.ConfigMap{*configMap("a", "a1"), *configMap("b", "b1")}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return changes, nil },
	}, &corev1.ConfigMap{}, 0, cache.Indexers{ClusterIndexName: ClusterIndexFunc})
	stop := make(chan struct{})
	defer close(stop)
	go informer.Run(stop)
	cache.WaitForCacheSync(stop, informer.HasSynced)

	var ds Dispatchers
	a, b := &recorder{}, &recorder{}
	ha, err := ds.AddEventHandler(informer, "a", a.handler())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, a, "add:a1")
	// A handler joining while the informer still hands its list to the
	// listener may see an object twice: wait until it has.
	cache.WaitForCacheSync(stop, ha.HasSynced)
	// A second cluster's handler joins the running listener.
	hb, err := ds.AddEventHandler(informer, "b", b.handler())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, "add:b1")
	if !hb.HasSynced() {
		t.Error("a handler given its cluster's objects has synced")
	}
	if n := len(ds.byInformer); n != 1 {
		t.Fatalf("%d listeners on the informer, want one", n)
	}

	changes.Add(configMap("a", "a2"))
	changes.Add(configMap("b", "b2"))
	changes.Delete(configMap("a", "a1"))
	waitFor(t, a, "add:a1", "add:a2", "delete:a1")
	waitFor(t, b, "add:b1", "add:b2")

	// a's handler goes, b's stays.
	if err := ds.RemoveEventHandler(ha); err != nil {
		t.Fatal(err)
	}
	if err := ds.RemoveEventHandler(ha); err != nil {
		t.Fatal("removing a handler twice:", err)
	}
	if n, ok := ds.Handlers(informer, "a"); n != 0 || !ok {
		t.Fatalf("%d handlers of a removed (listener %t), want none on a running listener", n, ok)
	}
	changes.Add(configMap("a", "a3"))
	changes.Add(configMap("b", "b3"))
	waitFor(t, b, "add:b1", "add:b2", "add:b3")
	waitFor(t, a, "add:a1", "add:a2", "delete:a1")

	// Of two handlers of one cluster, the one removed goes and the other
	// stays.
	c := &recorder{}
	hc, err := ds.AddEventHandler(informer, "b", c.handler())
	if err != nil {
		t.Fatal(err)
	}
	// The replay hands over the cluster's objects in no particular order.
	cache.WaitForCacheSync(stop, hc.HasSynced)
	if got := c.seen(); len(got) != 3 {
		t.Fatalf("a joining handler saw %v, want b's three objects", got)
	}
	if n, _ := ds.Handlers(informer, "b"); n != 2 {
		t.Fatalf("%d handlers of b, want 2", n)
	}
	if err := ds.RemoveEventHandler(hb); err != nil {
		t.Fatal(err)
	}
	changes.Add(configMap("b", "b4"))
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		got := c.seen()
		return len(got) == 4 && got[3] == "add:b4", nil
	}); err != nil {
		t.Fatalf("the handler left saw %v, want b4 added last", c.seen())
	}
	waitFor(t, b, "add:b1", "add:b2", "add:b3")

	// The last handler takes the listener with it.
	if err := ds.RemoveEventHandler(hc); err != nil {
		t.Fatal(err)
	}
	if _, ok := ds.Handlers(informer, "b"); ok {
		t.Fatal("the informer keeps a listener after its handlers left")
	}
}

func TestClusterOfTombstone(t *testing.T) {
	for _, obj := range []interface{}{
		cache.DeletedFinalStateUnknown{Key: "c|default/x", Obj: configMap("c", "x")},
		cache.DeletedFinalStateUnknown{Key: "c|default/x"},
		configMap("c", "x"),
	} {
		if cluster, ok := clusterOf(obj); !ok || cluster != "c" {
			t.Errorf("cluster of %#v: %q, %t; want c", obj, cluster, ok)
		}
	}
}
