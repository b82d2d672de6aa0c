package placement

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

// selections remembers what each placement selected. A rollout reconciles
// its placement many times (every binding's progress shows in the status);
// listing the workspace's resources each time cost more of the hub than
// the rollout itself. A selection is reused while the placement's spec and
// every placeable object of its workspace are unchanged (the resource
// change detector's epoch of the workspace).
type selections struct {
	mu          sync.Mutex
	byPlacement map[string]selection
}

// selection is what a placement selected: the objects' identities and the
// hash of the resource snapshot they make.
type selection struct {
	uid        types.UID
	generation int64
	epoch      uint64
	hash       string
	selected   []placementv1beta1.ResourceIdentifier
}

// get returns the selection of placement key if it still holds.
func (s *selections) get(key string, p placementv1beta1.PlacementObj, epoch uint64) (selection, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sel, ok := s.byPlacement[key]
	return sel, ok && sel.uid == p.GetUID() && sel.generation == p.GetGeneration() && sel.epoch == epoch
}

func (s *selections) put(key string, sel selection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byPlacement == nil {
		s.byPlacement = map[string]selection{}
	}
	s.byPlacement[key] = sel
}

func (s *selections) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byPlacement, key)
}

// reusedSnapshot is the placement's latest resource snapshot if it is the
// one the selection made.
func reusedSnapshot(ctx context.Context, c client.Reader, k placements.Key, sel selection) (placementv1beta1.ResourceSnapshotObj, error) {
	latest, err := placements.LatestResourceSnapshot(ctx, c, k)
	if err != nil || latest == nil || latest.GetAnnotations()[placementv1beta1.ResourceGroupHashAnnotation] != sel.hash {
		return nil, err
	}
	return latest, nil
}
