package workapplier

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// deletions remembers, per deleted Work, the objects it deleted on the
// member as the member cache showed them. Once the cache no longer holds
// such an object, the member has removed it: a Work waiting for thousands
// of deletions learns which are done from the cache, without asking the API
// server about each again.
type deletions struct {
	mu     sync.Mutex
	byWork map[string]workDeletions
}

// workDeletions are one Work's: a Work of the same name made later (its
// UID differs) starts afresh.
type workDeletions struct {
	uid     types.UID
	objects sets.Set[objectKey]
}

func (d *deletions) add(work *placementv1beta1.Work, key objectKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byWork == nil {
		d.byWork = map[string]workDeletions{}
	}
	w, ok := d.byWork[work.Name]
	if !ok || w.uid != work.UID {
		w = workDeletions{uid: work.UID, objects: sets.New[objectKey]()}
		d.byWork[work.Name] = w
	}
	w.objects.Insert(key)
}

func (d *deletions) has(work *placementv1beta1.Work, key objectKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	w, ok := d.byWork[work.Name]
	return ok && w.uid == work.UID && w.objects.Has(key)
}

// forget drops a Work's deletions: the Work is gone.
func (d *deletions) forget(work string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byWork, work)
}
