package release

import (
	"context"
	"sync"
	"testing"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// recordingInformer counts the handlers added and not removed.
type recordingInformer struct {
	cache.Informer
	mu       sync.Mutex
	handlers map[*registration]bool
}

func (r *recordingInformer) has(reg toolscache.ResourceEventHandlerRegistration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.handlers[reg.(*registration)]
}

func (r *recordingInformer) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.handlers)
}

type registration struct {
	toolscache.ResourceEventHandlerRegistration
}

func (r *recordingInformer) AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg := &registration{}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[reg] = true
	return reg, nil
}

func (r *recordingInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.handlers, reg.(*registration))
	return nil
}

func TestHandlersRemovedWhenWorkspaceGoes(t *testing.T) {
	shared := &recordingInformer{handlers: map[*registration]bool{}}
	other, err := shared.AddEventHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ws := &releasingInformer{Informer: shared, workspace: &workspace{ctx: ctx}}
	for range 3 {
		if _, err := ws.AddEventHandler(toolscache.ResourceEventHandlerFuncs{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := shared.count(); n != 4 {
		t.Fatalf("%d handlers while the workspace is engaged, want 4", n)
	}
	cancel()
	// context.AfterFunc runs in its own goroutine.
	for i := 0; i < 1000 && shared.count() > 1; i++ {
		time.Sleep(time.Millisecond)
	}
	if n := shared.count(); n != 1 || !shared.has(other) {
		t.Fatalf("after the workspace went: %d handlers, want only the one of another workspace", n)
	}
}

func TestWorkspaceHandlersDispatchedFromTheSharedInformer(t *testing.T) {
	inWorkspace := func(ws string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + ws, Namespace: "default",
			Annotations: map[string]string{logicalcluster.AnnotationKey: ws}}}
	}
	shared := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{Items: []corev1.ConfigMap{*inWorkspace("a"), *inWorkspace("b")}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}, &corev1.ConfigMap{}, 0, toolscache.Indexers{kcpcache.ClusterIndexName: kcpcache.ClusterIndexFunc})
	stop := make(chan struct{})
	defer close(stop)
	go shared.Run(stop)
	toolscache.WaitForCacheSync(stop, shared.HasSynced)

	m := &Manager{}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	seen := map[string]int{}
	for _, ws := range []string{"a", "b"} {
		i := &releasingInformer{shared: shared, workspace: &workspace{name: logicalcluster.Name(ws), ctx: ctx, manager: m}}
		if ws == "b" {
			i.ctx = context.Background()
		}
		for range 3 {
			reg, err := i.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
				mu.Lock()
				defer mu.Unlock()
				seen[logicalcluster.From(obj.(*corev1.ConfigMap)).String()+"/"+ws]++
			}})
			if err != nil {
				t.Fatal(err)
			}
			// Handlers that join while the informer still hands its list to
			// the listener may see an object twice.
			toolscache.WaitForCacheSync(stop, reg.HasSynced)
		}
	}
	for i := 0; i < 1000; i++ {
		mu.Lock()
		done := seen["a/a"] == 3 && seen["b/b"] == 3
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	if seen["a/a"] != 3 || seen["b/b"] != 3 || seen["a/b"]+seen["b/a"] != 0 {
		t.Fatalf("handlers saw %v; want each workspace's three handlers to see its object only", seen)
	}
	mu.Unlock()
	if n, ok := m.dispatchers.Handlers(shared, "a"); n != 3 || !ok {
		t.Fatalf("%d handlers of workspace a dispatched (listener %t), want 3", n, ok)
	}
	cancel()
	for i := 0; i < 1000; i++ {
		if n, _ := m.dispatchers.Handlers(shared, "a"); n == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if n, _ := m.dispatchers.Handlers(shared, "a"); n != 0 {
		t.Fatalf("%d handlers of workspace a stay after it went", n)
	}
	if n, _ := m.dispatchers.Handlers(shared, "b"); n != 3 {
		t.Fatalf("%d handlers of workspace b after a went, want 3", n)
	}
}

func TestMemoryReturnedOnceAfterTheLastWorkspaceWent(t *testing.T) {
	returns := func() uint64 {
		m := &dto.Metric{}
		if err := memoryReturns.Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	before := returns()
	m := &Manager{ReturnMemoryAfter: 50 * time.Millisecond}
	for range 3 {
		m.mu.Lock()
		m.returnMemoryLater()
		m.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	if got := returns() - before; got != 0 {
		t.Fatalf("memory returned %d times while workspaces were still going", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for returns()-before == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := returns() - before; got != 1 {
		t.Fatalf("memory returned %d times after the workspaces went, want once", got)
	}
}
