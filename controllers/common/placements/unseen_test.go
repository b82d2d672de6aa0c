package placements

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func cached(name, rv string) placementv1beta1.BindingObj {
	return &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
}

func clockAt(u *UnseenWrites[string]) *time.Time {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	u.now = func() time.Time { return now }
	return &now
}

func TestUnseenCreationsHoldAKeyUntilListedOrSeen(t *testing.T) {
	var u UnseenWrites[string]
	clockAt(&u)
	for _, name := range []string{"web-a-1", "web-b-1", "web-c-1"} {
		u.Created("ws1/web", name)
	}

	// The cache lists one of the three: a cycle now would bind b and c again.
	if wait := u.Wait("ws1/web", []placementv1beta1.BindingObj{cached("web-a-1", "5")}); wait != UnseenWriteTimeout {
		t.Fatalf("wait with two creations unseen = %v, want %v", wait, UnseenWriteTimeout)
	}
	if wait := u.Wait("ws2/web", nil); wait != 0 {
		t.Errorf("another key waits %v, want 0", wait)
	}

	// Creation events: only the last one the key waits for reports so.
	if u.CreationSeen("ws1/web", "web-b-1") {
		t.Error("seeing web-b-1 reported the last creation while web-c-1 is unseen")
	}
	if u.CreationSeen("ws1/other", "other-a-1") {
		t.Error("seeing a binding nobody waits for reported a last creation")
	}
	if !u.CreationSeen("ws1/web", "web-c-1") {
		t.Error("seeing the last unseen creation did not report it")
	}
	if wait := u.Wait("ws1/web", nil); wait != 0 || len(u.byKey) != 0 {
		t.Errorf("wait once every creation was seen = %v (remembered %v), want 0", wait, u.byKey)
	}
}

func TestUnseenUpdatesHoldAKeyWhileTheCacheHasTheOldVersion(t *testing.T) {
	var u UnseenWrites[string]
	clockAt(&u)
	u.Updated("ws/web", cached("a", "12"), "10")
	u.Updated("ws/web", cached("b", "13"), "11")
	u.Updated("ws/web", cached("unchanged", "14"), "14")

	if u.Wait("ws/web", []placementv1beta1.BindingObj{cached("a", "10"), cached("b", "13"), cached("unchanged", "14")}) == 0 {
		t.Fatal("not waiting though the cache does not show a's write")
	}
	if len(u.byKey["ws/web"]) != 1 {
		t.Fatalf("remembered: %v, want a only (b's write shows, unchanged's changed nothing)", u.byKey)
	}
	if u.CreationSeen("ws/web", "a") {
		t.Error("a creation event cleared an update")
	}
	if u.Wait("ws/web", []placementv1beta1.BindingObj{cached("a", "12")}) != 0 || len(u.byKey) != 0 {
		t.Fatalf("waiting once the cache shows every write: %v", u.byKey)
	}

	u.Updated("ws/web", cached("c", "21"), "20")
	if u.Wait("ws/web", nil) != 0 || len(u.byKey) != 0 {
		t.Fatalf("an updated binding that is gone is still awaited: %v", u.byKey)
	}
	u.Updated("ws/web", cached("d", "31"), "30")
	u.Forget("ws/web")
	if len(u.byKey) != 0 {
		t.Fatalf("a forgotten key is remembered: %v", u.byKey)
	}
}

func TestUnseenWritesWaitIsBounded(t *testing.T) {
	var u UnseenWrites[string]
	now := clockAt(&u)
	u.Created("ws1/web", "web-a-1")
	*now = now.Add(30 * time.Second)
	u.Updated("ws1/web", cached("web-b-1", "4"), "3")
	listed := []placementv1beta1.BindingObj{cached("web-b-1", "3")}
	if wait := u.Wait("ws1/web", listed); wait != UnseenWriteTimeout {
		t.Fatalf("wait = %v, want %v (the latest write's bound)", wait, UnseenWriteTimeout)
	}
	*now = now.Add(UnseenWriteTimeout - 10*time.Second)
	if wait := u.Wait("ws1/web", listed); wait != 10*time.Second {
		t.Fatalf("wait = %v, want 10s (the creation's bound has passed)", wait)
	}
	*now = now.Add(10 * time.Second)
	if wait := u.Wait("ws1/web", listed); wait != 0 || len(u.byKey) != 0 {
		t.Fatalf("wait past every bound = %v (remembered %v), want 0", wait, u.byKey)
	}
}

func TestUnseenWritesForgetOnlyRefusedCreations(t *testing.T) {
	gr := schema.GroupResource{Group: placementv1beta1.GroupVersion.Group, Resource: "clusterresourcebindings"}
	tests := []struct {
		name    string
		err     error
		waiting bool
	}{
		{"refused as invalid", apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "ClusterResourceBinding"}, "web-a-1", nil), false},
		{"refused, wrapped", errors.Join(errors.New("binding web"), apierrors.NewForbidden(gr, "web-a-1", errors.New("no"))), false},
		{"server timeout: may have been created", apierrors.NewServerTimeout(gr, "create", 1), true},
		{"connection lost: may have been created", context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u UnseenWrites[string]
			u.Created("ws1/web", "web-a-1")
			u.CreateFailed("ws1/web", "web-a-1", tt.err)
			if waiting := u.Wait("ws1/web", nil) > 0; waiting != tt.waiting {
				t.Errorf("waiting = %v, want %v", waiting, tt.waiting)
			}
		})
	}
}

func TestOverlayShowsUnseenUpdatesAsWritten(t *testing.T) {
	var u UnseenWrites[string]
	clockAt(&u)
	bound := cached("a", "12")
	bound.GetBindingSpec().State = placementv1beta1.BindingStateBound
	u.Updated("ws/web", bound, "10")
	u.Updated("ws/web", cached("b", "13"), "11")
	u.Created("ws/web", "c")

	listed := []placementv1beta1.BindingObj{cached("a", "10"), cached("b", "14")}
	got, wait := u.Overlay("ws/web", listed)
	if wait != UnseenWriteTimeout {
		t.Errorf("wait = %v, want %v for the unlisted creation of c", wait, UnseenWriteTimeout)
	}
	if len(got) != 2 || got[0].GetResourceVersion() != "12" || got[0].GetBindingSpec().State != placementv1beta1.BindingStateBound {
		t.Fatalf("a = %v, want a as written (version 12, Bound)", got[0])
	}
	if got[1] != listed[1] {
		t.Errorf("b = %v, want the listed b: its cache version is past the write", got[1])
	}
	if listed[0].GetResourceVersion() != "10" {
		t.Error("the listed slice was changed")
	}
	got[0].SetLabels(map[string]string{"changed": "by the caller"})
	if again, _ := u.Overlay("ws/web", listed); again[0].GetLabels() != nil {
		t.Error("a caller's change reached the remembered write")
	}
	if _, ok := u.byKey["ws/web"]["b"]; ok {
		t.Error("b's write is remembered though the cache shows a later version")
	}
}
