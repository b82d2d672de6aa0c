package placements

import (
	"errors"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// UnseenWriteTimeout bounds how long a key waits for its cache to show a
// write: a binding deleted before the cache saw it is never shown.
const UnseenWriteTimeout = 2 * time.Minute

// UnseenWrites remembers, per key (a placement, an update run), the bindings
// a controller wrote that its cache does not show yet. A reconcile that ran
// on such a cache would plan on the bindings' old state: bind a cluster a
// second time (binding names end in a random suffix, so the API server
// refuses nothing), write a binding again (a conflict), or count a binding
// as not yet bound, or as done with its old spec.
//
// A created binding is unseen until the cache lists it. An updated binding
// is unseen while the cache still has the resource version it was written
// from; absent from the cache, it is gone. Either is waited for at most
// UnseenWriteTimeout.
type UnseenWrites[K comparable] struct {
	mu    sync.Mutex
	byKey map[K]map[string]unseenWrite
	// now is the clock, replaced in tests.
	now func() time.Time
}

type unseenWrite struct {
	// from is the resource version an update was written from; empty for a
	// creation.
	from string
	// written is the binding as an update returned it.
	written placementv1beta1.BindingObj
	at      time.Time
}

// Created records a binding about to be created.
func (u *UnseenWrites[K]) Created(key K, name string) { u.record(key, name, unseenWrite{}) }

// Updated records a binding written from resource version from, as the
// update returned it; a write that changed nothing leaves nothing unseen.
func (u *UnseenWrites[K]) Updated(key K, written placementv1beta1.BindingObj, from string) {
	if from != written.GetResourceVersion() {
		u.record(key, written.GetName(), unseenWrite{from: from, written: written.DeepCopyObject().(placementv1beta1.BindingObj)})
	}
}

func (u *UnseenWrites[K]) record(key K, name string, w unseenWrite) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byKey == nil {
		u.byKey = map[K]map[string]unseenWrite{}
	}
	if u.byKey[key] == nil {
		u.byKey[key] = map[string]unseenWrite{}
	}
	w.at = u.clock()
	u.byKey[key][name] = w
}

// CreateFailed forgets a binding whose creation the API server refused; one
// whose outcome is unknown (a timeout, a lost connection) stays awaited.
func (u *UnseenWrites[K]) CreateFailed(key K, name string, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return
	}
	u.CreationSeen(key, name)
}

// CreationSeen records that the cache shows a created binding, and reports
// whether that was the last write the key waited for.
func (u *UnseenWrites[K]) CreationSeen(key K, name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	writes := u.byKey[key]
	if w, ok := writes[name]; !ok || w.from != "" {
		return false
	}
	delete(writes, name)
	if len(writes) > 0 {
		return false
	}
	delete(u.byKey, key)
	return true
}

// Wait reports how much longer the key waits for its writes, given the
// bindings its cache lists now: zero once the cache shows them all. It
// forgets the writes the cache shows, the updated bindings that are gone and
// the writes past the timeout.
func (u *UnseenWrites[K]) Wait(key K, listed []placementv1beta1.BindingObj) time.Duration {
	_, creations, updates := u.sweep(key, listed)
	return max(creations, updates)
}

// Overlay returns the bindings as the key last wrote them: those listed,
// each binding whose update the cache does not show yet replaced by what
// the update returned, so that a reconcile plans on what it wrote without
// waiting for its cache. It also returns how much longer the key waits for
// creations the cache does not list, which have nothing to show in their
// place.
func (u *UnseenWrites[K]) Overlay(key K, listed []placementv1beta1.BindingObj) ([]placementv1beta1.BindingObj, time.Duration) {
	overlaid, creations, _ := u.sweep(key, listed)
	return overlaid, creations
}

// sweep forgets the key's writes that the listed bindings show, the updated
// bindings that are gone and the writes past the timeout; it returns the
// listed bindings with the unseen updates in their place, and how much
// longer unseen creations and unseen updates are waited for.
func (u *UnseenWrites[K]) sweep(key K, listed []placementv1beta1.BindingObj) (overlaid []placementv1beta1.BindingObj, creations, updates time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	overlaid = listed
	writes := u.byKey[key]
	if len(writes) == 0 {
		return overlaid, 0, 0
	}
	at := make(map[string]int, len(listed))
	for i, b := range listed {
		at[b.GetName()] = i
	}
	now, cloned := u.clock(), false
	for name, w := range writes {
		i, isListed := at[name]
		left := UnseenWriteTimeout - now.Sub(w.at)
		switch {
		case left <= 0:
			delete(writes, name)
		case w.from == "" && !isListed:
			creations = max(creations, left)
		case w.from != "" && isListed && listed[i].GetResourceVersion() == w.from:
			if !cloned {
				overlaid, cloned = slices.Clone(listed), true
			}
			overlaid[i] = w.written.DeepCopyObject().(placementv1beta1.BindingObj)
			updates = max(updates, left)
		default:
			delete(writes, name)
		}
	}
	if len(writes) == 0 {
		delete(u.byKey, key)
	}
	return overlaid, creations, updates
}

// Forget drops a key that is gone.
func (u *UnseenWrites[K]) Forget(key K) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.byKey, key)
}

func (u *UnseenWrites[K]) clock() time.Time {
	if u.now == nil {
		return time.Now()
	}
	return u.now()
}
