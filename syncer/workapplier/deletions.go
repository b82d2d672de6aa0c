package workapplier

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
)

// deletions remembers, per Work, the objects it deleted on the member as
// the member cache showed them. Once the cache no longer holds such an
// object, the member has removed it: a Work waiting for thousands of
// deletions learns which are done from the cache, without asking the API
// server about each again.
type deletions struct {
	mu     sync.Mutex
	byWork map[string]sets.Set[objectKey]
}

func (d *deletions) add(work string, key objectKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byWork == nil {
		d.byWork = map[string]sets.Set[objectKey]{}
	}
	if d.byWork[work] == nil {
		d.byWork[work] = sets.New[objectKey]()
	}
	d.byWork[work].Insert(key)
}

func (d *deletions) has(work string, key objectKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byWork[work].Has(key)
}

// forget drops a Work's deletions: the Work is gone.
func (d *deletions) forget(work string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byWork, work)
}
