package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func crp(maxUnavailable, maxSurge string) *placementv1beta1.ClusterResourcePlacement {
	mu, ms := intstr.Parse(maxUnavailable), intstr.Parse(maxSurge)
	p := &placementv1beta1.ClusterResourcePlacement{}
	p.Name = "p"
	p.Spec.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: &mu, MaxSurge: &ms, UnavailablePeriodSeconds: ptr.To(60)}
	return p
}

// binding builds a binding; available says whether its Available condition
// is True (reason, when set, overrides the reason; appliedAgo dates Applied).
func binding(name string, state placementv1beta1.BindingState, snapshot string, available bool, reason string, appliedAgo time.Duration) placementv1beta1.BindingObj {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Name = name
	b.Spec.State = state
	b.Spec.TargetCluster = name
	b.Spec.ResourceSnapshotName = snapshot
	if available {
		if reason == "" {
			reason = placementv1beta1.AllWorkAvailableReason
		}
		b.Status.Conditions = []metav1.Condition{
			{Type: "Applied", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-appliedAgo))},
			{Type: "Available", Status: metav1.ConditionTrue, Reason: reason},
		}
	}
	return b
}

// generation makes the binding's spec newer than its status reports.
func generation(b placementv1beta1.BindingObj, gen int64) placementv1beta1.BindingObj {
	b.SetGeneration(gen)
	return b
}

// pickN gives the placement a PickN policy: the rollout counts its limits
// against numberOfClusters.
func pickN(n int32, p *placementv1beta1.ClusterResourcePlacement) *placementv1beta1.ClusterResourcePlacement {
	p.Spec.Policy = &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(n)}
	return p
}

// withOverrides records ClusterResourceOverride snapshots on a binding.
func withOverrides(b placementv1beta1.BindingObj, cro ...string) placementv1beta1.BindingObj {
	b.(*placementv1beta1.ClusterResourceBinding).Spec.ClusterResourceOverrideSnapshots = cro
	return b
}

func names(bs []placementv1beta1.BindingObj) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.GetName())
	}
	return out
}

func TestPlanRollout(t *testing.T) {
	bound, scheduled, unscheduled := placementv1beta1.BindingStateBound, placementv1beta1.BindingStateScheduled, placementv1beta1.BindingStateUnscheduled
	tests := []struct {
		name                              string
		p                                 *placementv1beta1.ClusterResourcePlacement
		overrides                         map[string]overrides.Applicable
		bindings                          []placementv1beta1.BindingObj
		wantUpdate, wantRemove, wantBlock []string
		wantRecheck                       bool
	}{
		{
			name:       "new clusters are bound up to the surge limit",
			p:          crp("1", "1"),
			bindings:   []placementv1beta1.BindingObj{binding("a", scheduled, "", false, "", 0), binding("b", scheduled, "", false, "", 0)},
			wantUpdate: []string{"a", "b"}, // target 2 + surge 1 allows both
		},
		{
			name: "an update takes one available cluster down at a time",
			p:    crp("1", "0"),
			bindings: []placementv1beta1.BindingObj{
				binding("a", bound, "s-0", true, "", 0), binding("b", bound, "s-0", true, "", 0), binding("c", bound, "s-0", true, "", 0),
			},
			wantUpdate: []string{"a"},
			wantBlock:  []string{"b", "c"},
		},
		{
			name: "a bad update stops after maxUnavailable clusters",
			p:    crp("1", "0"),
			bindings: []placementv1beta1.BindingObj{
				binding("a", bound, "s-1", false, "", 0), // updated, never became available
				binding("b", bound, "s-0", true, "", 0), binding("c", bound, "s-0", true, "", 0),
			},
			wantBlock: []string{"b", "c"},
		},
		{
			name: "unavailable bindings are updated at once",
			p:    crp("1", "0"),
			bindings: []placementv1beta1.BindingObj{
				binding("a", bound, "s-0", false, "", 0), binding("b", bound, "s-0", true, "", 0),
			},
			wantUpdate: []string{"a"},
			wantBlock:  []string{"b"},
		},
		{
			name: "untrackable resources count as available only after the period",
			p:    crp("1", "0"),
			bindings: []placementv1beta1.BindingObj{
				binding("a", bound, "s-1", true, placementv1beta1.WorkNotAvailabilityTrackableReason, 10*time.Second),
				binding("b", bound, "s-0", true, "", 0),
			},
			wantBlock:   []string{"b"},
			wantRecheck: true,
		},
		{
			name: "an unscheduled cluster is removed while availability allows",
			p:    crp("25%", "25%"),
			bindings: []placementv1beta1.BindingObj{
				binding("a", bound, "s-1", true, "", 0), binding("b", bound, "s-1", true, "", 0),
				binding("old", unscheduled, "s-1", true, "", 0),
			},
			wantRemove: []string{"old"},
		},
		{
			// The seeds' rolling-update example 2: PickN 2 moves from the west
			// clusters to the east ones with maxSurge 2 and the default
			// maxUnavailable (25% of 2, rounded up: 1).
			name: "a policy change surges the new clusters in and removes one old cluster at once",
			p:    pickN(2, crp("25%", "2")),
			bindings: []placementv1beta1.BindingObj{
				binding("c1", unscheduled, "s-1", true, "", 0), binding("c2", unscheduled, "s-1", true, "", 0),
				binding("c3", scheduled, "", false, "", 0), binding("c4", scheduled, "", false, "", 0),
			},
			wantRemove: []string{"c1"},
			wantUpdate: []string{"c3", "c4"},
		},
		{
			name: "the last old cluster stays until a new one is available",
			p:    pickN(2, crp("25%", "2")),
			bindings: []placementv1beta1.BindingObj{
				binding("c2", unscheduled, "s-1", true, "", 0),
				binding("c3", bound, "s-1", false, "", 0), binding("c4", bound, "s-1", false, "", 0),
			},
		},
		{
			name: "and goes once one is",
			p:    pickN(2, crp("25%", "2")),
			bindings: []placementv1beta1.BindingObj{
				binding("c2", unscheduled, "s-1", true, "", 0),
				binding("c3", bound, "s-1", true, "", 0), binding("c4", bound, "s-1", false, "", 0),
			},
			wantRemove: []string{"c2"},
		},
		{
			name: "without surge, a new cluster waits for an old one to go",
			p:    pickN(2, crp("1", "0")),
			bindings: []placementv1beta1.BindingObj{
				binding("c1", unscheduled, "s-1", true, "", 0), binding("c2", bound, "s-1", true, "", 0),
				binding("c3", scheduled, "", false, "", 0),
			},
			wantRemove: []string{"c1"},
			wantUpdate: []string{"c3"},
		},
		{
			name: "an unscheduled cluster counts as available on the report from before it was unscheduled",
			p:    pickN(2, crp("25%", "1")),
			bindings: []placementv1beta1.BindingObj{
				generation(binding("c1", unscheduled, "s-1", true, "", 0), 3), generation(binding("c2", unscheduled, "s-1", true, "", 0), 3),
				binding("c3", scheduled, "", false, "", 0),
			},
			wantRemove: []string{"c1"},
			wantUpdate: []string{"c3"},
		},
		{
			name:      "an override change is an update, one available cluster at a time",
			p:         crp("1", "0"),
			overrides: map[string]overrides.Applicable{"a": {Cluster: []string{"cro-1"}}, "b": {Cluster: []string{"cro-1"}}},
			bindings: []placementv1beta1.BindingObj{
				withOverrides(binding("a", bound, "s-1", true, "", 0), "cro-0"), withOverrides(binding("b", bound, "s-1", true, "", 0), "cro-0"),
				binding("c", bound, "s-1", true, "", 0), // no override applies on c
			},
			wantUpdate: []string{"a"},
			wantBlock:  []string{"b"},
		},
		{
			name:       "percentages round up",
			p:          crp("10%", "0"),
			bindings:   []placementv1beta1.BindingObj{binding("a", bound, "s-0", true, "", 0), binding("b", bound, "s-0", true, "", 0)},
			wantUpdate: []string{"a"},
			wantBlock:  []string{"b"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := planRollout(now, tc.p, "s-1", tc.overrides, tc.bindings)
			check := func(what string, got, want []string) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s = %v, want %v", what, got, want)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s = %v, want %v", what, got, want)
					}
				}
			}
			check("update", names(got.update), tc.wantUpdate)
			check("remove", names(got.remove), tc.wantRemove)
			check("blocked", names(got.blocked), tc.wantBlock)
			if (got.recheck > 0) != tc.wantRecheck {
				t.Errorf("recheck = %s", got.recheck)
			}
		})
	}
}
