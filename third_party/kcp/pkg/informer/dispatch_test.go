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

package informer

import (
	"context"
	"sync"
	"testing"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
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

func TestWorkspaceHandlersGoWithTheWorkspace(t *testing.T) {
	changes := watch.NewFake()
	informer := kcpinformers.NewSharedIndexInformer(&cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{Items: []corev1.ConfigMap{*configMap("a", "a1")}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return changes, nil },
	}, &corev1.ConfigMap{}, 0, cache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	stop := make(chan struct{})
	defer close(stop)
	go informer.Run(stop)
	cache.WaitForCacheSync(stop, informer.HasSynced)

	var ds kcpcache.Dispatchers
	scoped := func(ctx context.Context, cluster string) *dispatchedSharedIndexInformer {
		return &dispatchedSharedIndexInformer{
			SharedIndexInformer: informer.Cluster(logicalcluster.Name(cluster)),
			clusterWide:         informer,
			cluster:             logicalcluster.Name(cluster),
			dispatchers:         &ds,
			ctx:                 ctx,
		}
	}
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	a, b := &recorder{}, &recorder{}
	if _, err := scoped(ctxA, "a").AddEventHandler(a.handler()); err != nil {
		t.Fatal(err)
	}
	registration, err := scoped(context.Background(), "b").AddEventHandler(b.handler())
	if err != nil {
		t.Fatal(err)
	}
	changes.Add(configMap("b", "b1"))
	waitFor(t, a, "add:a1")
	waitFor(t, b, "add:b1")

	// Workspace a ends: its handler goes, b's stays.
	cancelA()
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		n, _ := ds.Handlers(informer, "a")
		return n == 0, nil
	})
	if err != nil {
		t.Fatal("the handler of a workspace whose context ended stays")
	}
	changes.Add(configMap("a", "a2"))
	changes.Add(configMap("b", "b2"))
	waitFor(t, b, "add:b1", "add:b2")
	waitFor(t, a, "add:a1")

	if err := scoped(context.Background(), "b").RemoveEventHandler(registration); err != nil {
		t.Fatal(err)
	}
	if _, ok := ds.Handlers(informer, "b"); ok {
		t.Fatal("the informer keeps a listener after its handlers left")
	}
	if _, err := scoped(ctxA, "a").AddEventHandler(a.handler()); err == nil {
		t.Error("a workspace whose context ended cannot add handlers")
	}
}
