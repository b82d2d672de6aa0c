package placements

import (
	"errors"
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
	at   time.Time
}

// Created records a binding about to be created.
func (u *UnseenWrites[K]) Created(key K, name string) { u.record(key, name, "") }

// Updated records a binding written from resource version from to to; a
// write that changed nothing leaves nothing to wait for.
func (u *UnseenWrites[K]) Updated(key K, name, from, to string) {
	if from != to {
		u.record(key, name, from)
	}
}

func (u *UnseenWrites[K]) record(key K, name, from string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byKey == nil {
		u.byKey = map[K]map[string]unseenWrite{}
	}
	if u.byKey[key] == nil {
		u.byKey[key] = map[string]unseenWrite{}
	}
	u.byKey[key][name] = unseenWrite{from: from, at: u.clock()}
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
	u.mu.Lock()
	defer u.mu.Unlock()
	writes := u.byKey[key]
	if len(writes) == 0 {
		return 0
	}
	listedVersion := make(map[string]string, len(listed))
	for _, b := range listed {
		listedVersion[b.GetName()] = b.GetResourceVersion()
	}
	now := u.clock()
	var wait time.Duration
	for name, w := range writes {
		rv, isListed := listedVersion[name]
		creationUnseen := w.from == "" && !isListed
		updateUnseen := w.from != "" && isListed && rv == w.from
		left := UnseenWriteTimeout - now.Sub(w.at)
		if !(creationUnseen || updateUnseen) || left <= 0 {
			delete(writes, name)
			continue
		}
		wait = max(wait, left)
	}
	if len(writes) == 0 {
		delete(u.byKey, key)
	}
	return wait
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
