package scheduler

import (
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

// unseenCreationsTimeout is how long a placement waits for the cache to show
// the bindings this scheduler created for it before it is scheduled anyway
// (a binding deleted before the cache saw it is never shown).
const unseenCreationsTimeout = 2 * time.Minute

// creations remembers, per placement, the bindings the scheduler created that
// its cache has not shown yet. Binding names end in a random suffix, so the
// API server cannot refuse a second binding for the same cluster: a cycle
// run on a cache that lags behind the scheduler's own creations (a retry
// after a conflict, say) would bind those clusters again. A placement with
// unseen bindings is not scheduled until the cache shows them.
type creations struct {
	mu      sync.Mutex
	pending map[creationsKey]*unseen
	now     func() time.Time
}

type creationsKey struct {
	workspace string
	placement placements.Key
}

type unseen struct {
	names sets.Set[string]
	since time.Time
}

func newCreations() *creations {
	return &creations{pending: map[creationsKey]*unseen{}, now: time.Now}
}

// expect records a binding about to be created.
func (c *creations) expect(workspace string, k placements.Key, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := creationsKey{workspace, k}
	u := c.pending[key]
	if u == nil {
		u = &unseen{names: sets.New[string]()}
		c.pending[key] = u
	}
	u.names.Insert(name)
	u.since = c.now()
}

// failed forgets a binding whose creation the API server refused; one whose
// outcome is unknown (a timeout, a lost connection) stays expected.
func (c *creations) failed(workspace string, k placements.Key, name string, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return
	}
	c.seen(workspace, k, name)
}

// seen records that the cache shows a binding, and reports whether that was
// the last one the placement waited for.
func (c *creations) seen(workspace string, k placements.Key, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := creationsKey{workspace, k}
	u := c.pending[key]
	if u == nil || !u.names.Has(name) {
		return false
	}
	u.names.Delete(name)
	if u.names.Len() > 0 {
		return false
	}
	delete(c.pending, key)
	return true
}

// wait reports how much longer the placement waits for bindings it created,
// given those its cache lists now; zero when it may be scheduled.
func (c *creations) wait(workspace string, k placements.Key, listed []placementv1beta1.BindingObj) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := creationsKey{workspace, k}
	u := c.pending[key]
	if u == nil {
		return 0
	}
	for _, b := range listed {
		u.names.Delete(b.GetName())
	}
	left := unseenCreationsTimeout - c.now().Sub(u.since)
	if u.names.Len() == 0 || left <= 0 {
		delete(c.pending, key)
		return 0
	}
	return left
}
