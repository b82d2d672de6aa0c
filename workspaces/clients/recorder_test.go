package clients

import (
	"context"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

func eventsIn(t *testing.T, cs *fake.Clientset, reason string) func() bool {
	return func() bool {
		list, err := cs.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Reason == reason {
				return true
			}
		}
		return false
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
	}
}

func running(w *Workspace) bool {
	w.recorderMu.Lock()
	defer w.recorderMu.Unlock()
	return w.broadcaster != nil
}

func TestRecorderStopsWhenIdleAndStartsAgain(t *testing.T) {
	cs := fake.NewClientset()
	w := &Workspace{events: cs.CoreV1()}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default", UID: "u1"}}
	rec := w.Recorder(scheme.Scheme, "test")
	if running(w) {
		t.Fatal("a broadcaster started before any event")
	}

	rec.Event(obj, corev1.EventTypeNormal, "First", "first event")
	eventually(t, "the first event", eventsIn(t, cs, "First"))

	// Idle since the first event was written (its write ends just after
	// the event can be read back, and counts as activity).
	eventually(t, "an idle broadcaster stopping", func() bool {
		w.lastActive.Store(time.Now().Add(-recorderIdle).UnixNano())
		w.stopIdleRecording()
		return !running(w)
	})

	rec.Eventf(obj, corev1.EventTypeWarning, "Second", "event %d", 2)
	eventually(t, "an event after the idle stop", eventsIn(t, cs, "Second"))

	w.stopIdleRecording() // just used: keeps running
	if !running(w) {
		t.Fatal("a broadcaster in use was stopped")
	}
}

func TestRecorderOfAForgottenWorkspaceRecordsNothing(t *testing.T) {
	cs := fake.NewClientset()
	w := &Workspace{events: cs.CoreV1()}
	f := &Factory{cache: map[logicalcluster.Name]*Workspace{"gone": w}}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default", UID: "u1"}}
	rec := w.Recorder(scheme.Scheme, "test")
	rec.Event(obj, corev1.EventTypeNormal, "Before", "before")
	eventually(t, "the event before the workspace went", eventsIn(t, cs, "Before"))

	f.Forget("gone")
	rec.Event(obj, corev1.EventTypeNormal, "After", "after")
	if running(w) {
		t.Error("an event started a broadcaster in a workspace that went away")
	}
	time.Sleep(100 * time.Millisecond)
	if eventsIn(t, cs, "After")() {
		t.Error("an event was recorded in a workspace that went away")
	}
}
