package placement

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// released holds the placements that specs deleted at their end without
// waiting until they were gone (team.release).
var released releasedPlacements

var _ = BeforeEach(func() {
	if CurrentSpecReport().IsSerial {
		released.drain()
	}
})

var _ = AfterSuite(func() { released.drain() })

type releasedPlacement struct {
	t    *team
	p    placementv1beta1.PlacementObj
	spec string
}

func (r releasedPlacement) String() string {
	return fmt.Sprintf("placement %s in %s (released by %q)", client.ObjectKeyFromObject(r.p), r.t.Path, r.spec)
}

// releasedPlacements is used from the specs' own goroutine only (cleanup,
// BeforeEach and team.place).
type releasedPlacements struct {
	pending []releasedPlacement
}

func (rs *releasedPlacements) add(t *team, p placementv1beta1.PlacementObj) {
	rs.pending = append(rs.pending, releasedPlacement{t: t, p: p, spec: CurrentSpecReport().FullText()})
}

// drain waits until every released placement is gone. A placement of
// 10,000 objects takes minutes to remove from its member.
func (rs *releasedPlacements) drain() {
	rs.waitUntilGone(func(releasedPlacement) bool { return true })
}

// waitFor waits until a released placement with p's name in t's workspace
// is gone, so that p can be created.
func (rs *releasedPlacements) waitFor(t *team, p placementv1beta1.PlacementObj) {
	rs.waitUntilGone(func(r releasedPlacement) bool {
		return r.t.Path == t.Path && client.ObjectKeyFromObject(r.p) == client.ObjectKeyFromObject(p) && reflect.TypeOf(r.p) == reflect.TypeOf(p)
	})
}

func (rs *releasedPlacements) waitUntilGone(match func(releasedPlacement) bool) {
	EventuallyWithOffset(2, func() []string {
		rs.pending = slices.DeleteFunc(rs.pending, func(r releasedPlacement) bool { return match(r) && r.t.placementGone(r.p) })
		var left []string
		for _, r := range rs.pending {
			if match(r) {
				left = append(left, r.String())
			}
		}
		return left
	}).WithTimeout(6*time.Minute).Should(BeEmpty(), "released placements not deleted")
}
