package release

import (
	"context"
	"sync"
	"testing"
	"time"

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
	ws := &releasingInformer{Informer: shared, ctx: ctx}
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
