package placement

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

var rolloutDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "fleet_placement_rollout_duration_seconds",
	Help: "Time from the hub seeing a placement change (its spec, or the resources it selects) to every scheduled cluster reporting the new revision Available.",
	// 50 ms to about 14 min.
	Buckets: prometheus.ExponentialBuckets(0.05, 2, 15),
}, []string{"kind"})

func init() {
	ctrlmetrics.Registry.MustRegister(rolloutDuration)
}

// rolloutClock times each placement revision (generation and resource
// index) from the first reconcile that sees it to the status that reports
// it Available everywhere. It lives in memory: a revision in flight when
// the hub restarts is timed from the restart.
type rolloutClock struct {
	mu      sync.Mutex
	started map[string]revisionStart
}

type revisionStart struct {
	revision string
	at       time.Time
}

// observe notes the placement's status after a reconcile; key names the
// placement across workspaces.
func (c *rolloutClock) observe(key string, p placementv1beta1.PlacementObj, status *placementv1beta1.PlacementStatus, now time.Time) {
	revision := status.ObservedResourceIndex + "@" + strconv.FormatInt(p.GetGeneration(), 10)
	c.mu.Lock()
	defer c.mu.Unlock()
	s, tracked := c.started[key]
	if rolledOut(p, status) {
		if tracked && s.revision == revision {
			rolloutDuration.WithLabelValues(placementv1beta1.PlacementKindOf(p)).Observe(now.Sub(s.at).Seconds())
		}
		delete(c.started, key)
		return
	}
	if !tracked || s.revision != revision {
		if c.started == nil {
			c.started = map[string]revisionStart{}
		}
		c.started[key] = revisionStart{revision: revision, at: now}
	}
}

// forget drops a placement that is gone.
func (c *rolloutClock) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.started, key)
}

// rolledOut tells whether every scheduled cluster runs the placement's
// current revision and reports it Available.
func rolledOut(p placementv1beta1.PlacementObj, status *placementv1beta1.PlacementStatus) bool {
	available := meta.FindStatusCondition(status.Conditions, placementv1beta1.AvailableCondition.TypeFor(p))
	if available == nil || available.Status != metav1.ConditionTrue || available.ObservedGeneration != p.GetGeneration() {
		return false
	}
	for _, s := range status.PerClusterPlacementStatuses {
		if s.ClusterName != "" && s.ObservedResourceIndex != status.ObservedResourceIndex {
			return false
		}
	}
	return true
}
