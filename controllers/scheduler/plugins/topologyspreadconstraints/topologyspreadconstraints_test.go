package topologyspreadconstraints

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func cluster(name string, kv ...string) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i < len(kv); i += 2 {
		mc.Labels[kv[i]] = kv[i+1]
	}
	return mc
}

func pickN(constraints ...placementv1beta1.TopologySpreadConstraint) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, TopologySpreadConstraints: constraints}
}

func TestPluginAppliesToPickNWithConstraints(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		skip   bool
	}{
		{"PickN with constraints", pickN(placementv1beta1.TopologySpreadConstraint{TopologyKey: "region"}), false},
		{"PickN without constraints", pickN(), true},
		{"PickAll", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType,
			TopologySpreadConstraints: []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "region"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState(framework.CycleInfo{})
			if st := New().PreFilter(ctx, state, tt.policy); st.IsSkip() != tt.skip {
				t.Errorf("PreFilter = %v, want skip %v", st, tt.skip)
			}
			n, st := New().PostBatch(ctx, state, tt.policy)
			if st.IsSkip() != tt.skip || !tt.skip && n != 1 {
				t.Errorf("PostBatch = %d, %v", n, st)
			}
		})
	}
}

// TestFilterAndScore prepares a cycle with bound and feasible clusters, then
// checks the verdict for each feasible cluster.
func TestFilterAndScore(t *testing.T) {
	one := int32(1)
	type verdict struct {
		reason string
		score  int32
	}
	tests := []struct {
		name        string
		constraints []placementv1beta1.TopologySpreadConstraint
		bound       []*clusterv1beta1.MemberCluster
		feasible    []*clusterv1beta1.MemberCluster
		want        map[string]verdict
	}{
		{
			name:        "defaults: max skew 1, DoNotSchedule",
			constraints: []placementv1beta1.TopologySpreadConstraint{{TopologyKey: "region"}},
			bound:       []*clusterv1beta1.MemberCluster{cluster("e0", "region", "east")},
			feasible:    []*clusterv1beta1.MemberCluster{cluster("e1", "region", "east"), cluster("w1", "region", "west"), cluster("x")},
			want: map[string]verdict{
				"e1": {reason: `violated doNotSchedule topology spread constraint "region" (max skew 1)`},
				"w1": {score: 0},
				"x":  {reason: `cluster does not have the topology key "region" of a doNotSchedule topology spread constraint`},
			},
		},
		{
			name: "ScheduleAnyway only scores; unlabelled clusters rank last",
			constraints: []placementv1beta1.TopologySpreadConstraint{
				{TopologyKey: "region", MaxSkew: &one, WhenUnsatisfiable: placementv1beta1.ScheduleAnyway},
			},
			bound:    []*clusterv1beta1.MemberCluster{cluster("e0", "region", "east"), cluster("e1", "region", "east")},
			feasible: []*clusterv1beta1.MemberCluster{cluster("e2", "region", "east"), cluster("w1", "region", "west"), cluster("x")},
			want: map[string]verdict{
				"e2": {score: -2},
				"w1": {score: 0},
				"x":  {score: -3},
			},
		},
		{
			name: "scores add up over constraints",
			constraints: []placementv1beta1.TopologySpreadConstraint{
				{TopologyKey: "region", WhenUnsatisfiable: placementv1beta1.ScheduleAnyway},
				{TopologyKey: "zone", WhenUnsatisfiable: placementv1beta1.ScheduleAnyway},
			},
			bound: []*clusterv1beta1.MemberCluster{cluster("e0", "region", "east", "zone", "z1")},
			feasible: []*clusterv1beta1.MemberCluster{
				cluster("e1", "region", "east", "zone", "z1"), cluster("e2", "region", "east", "zone", "z2"), cluster("w1", "region", "west", "zone", "z1"),
			},
			want: map[string]verdict{"e1": {score: -2}, "e2": {score: -1}, "w1": {score: -1}},
		},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := pickN(tt.constraints...)
			state := framework.NewCycleState(framework.CycleInfo{ScheduledOrBound: tt.bound})
			if st := New().PreFilter(ctx, state, policy); st != nil {
				t.Fatalf("PreFilter = %v", st)
			}
			if st := New().PreScore(ctx, state, policy, tt.feasible); st != nil {
				t.Fatalf("PreScore = %v", st)
			}
			for _, mc := range tt.feasible {
				want := tt.want[mc.Name]
				st := New().Filter(ctx, state, policy, mc)
				if st.Message() != want.reason {
					t.Errorf("Filter(%s) = %v, want %q", mc.Name, st, want.reason)
				}
				if st != nil {
					continue
				}
				score, st := New().Score(ctx, state, policy, mc)
				if st != nil || score.TopologySpreadScore != want.score {
					t.Errorf("Score(%s) = %+v, %v; want %d", mc.Name, score, st, want.score)
				}
			}
		})
	}
}

func TestReserveCountsPicks(t *testing.T) {
	ctx := context.Background()
	two := int32(2)
	policy := pickN(placementv1beta1.TopologySpreadConstraint{TopologyKey: "region", MaxSkew: &two})
	e1, e2, e3, w1 := cluster("e1", "region", "east"), cluster("e2", "region", "east"), cluster("e3", "region", "east"), cluster("w1", "region", "west")
	state := framework.NewCycleState(framework.CycleInfo{})
	New().PreFilter(ctx, state, policy)
	New().PreScore(ctx, state, policy, []*clusterv1beta1.MemberCluster{e1, e2, e3, w1})
	for _, picked := range []*clusterv1beta1.MemberCluster{e1, e2} {
		if st := New().Filter(ctx, state, policy, picked); st != nil {
			t.Fatalf("Filter(%s) before pick = %v", picked.Name, st)
		}
		if st := New().Reserve(ctx, state, policy, picked); st != nil {
			t.Fatalf("Reserve = %v", st)
		}
	}
	// east 2, west 0: a third east pick would make the skew 3.
	if st := New().Filter(ctx, state, policy, e3); !st.IsClusterUnschedulable() {
		t.Errorf("Filter(e3) = %v, want unschedulable", st)
	}
	if score, _ := New().Score(ctx, state, policy, w1); score.TopologySpreadScore != 0 {
		t.Errorf("Score(w1) = %d, want 0", score.TopologySpreadScore)
	}
	New().Reserve(ctx, state, policy, w1)
	if st := New().Filter(ctx, state, policy, e3); st != nil {
		t.Errorf("Filter(e3) after a west pick = %v, want success", st)
	}
}

func TestStagesNeedPreScore(t *testing.T) {
	ctx := context.Background()
	policy := pickN(placementv1beta1.TopologySpreadConstraint{TopologyKey: "region"})
	state := framework.NewCycleState(framework.CycleInfo{})
	New().PreFilter(ctx, state, policy)
	mc := cluster("a", "region", "east")
	if st := New().Filter(ctx, state, policy, mc); !st.IsInternalError() {
		t.Errorf("Filter before PreScore = %v, want an internal error", st)
	}
	New().PreScore(ctx, state, policy, nil)
	if _, st := New().Score(ctx, state, policy, mc); !st.IsInternalError() {
		t.Errorf("Score of an unseen cluster = %v, want an internal error", st)
	}
}
