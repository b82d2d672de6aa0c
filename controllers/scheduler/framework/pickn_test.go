package framework_test

import (
	"fmt"
	"slices"
	"testing"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func TestPickNWithoutAffinityPicksByName(t *testing.T) {
	res := schedule(t, newInput(pickN(2), newCluster("a"), newCluster("b"), newCluster("c")))
	// Equal scores: the lexicographically larger name ranks higher.
	equal(t, "created", created(res), []string{"b", "c"})
	if got, want := reasons(res)["a"], `Cluster "a" does not score high enough (affinity score: 0, topology spread score: 0)`; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if !res.Fulfilled || res.Message != "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)" {
		t.Errorf("condition = %v %q", res.Fulfilled, res.Message)
	}
}

func TestPickNNotEnoughClustersKeepsLooking(t *testing.T) {
	in := newInput(pickN(3), newCluster("a"), newCluster("b"), newCluster("bad", left))
	res := schedule(t, in)
	equal(t, "created", created(res), []string{"a", "b"})
	if res.Fulfilled || res.Reason != placementv1beta1.SchedulingPolicyUnfulfilledReason ||
		res.Message != "could not find all clusters needed as specified by the scheduling policy, found 2 cluster(s) instead" {
		t.Errorf("condition = %v %s %q", res.Fulfilled, res.Reason, res.Message)
	}

	// The controller persisted the bindings; a cluster joins; the next cycle adds it.
	in.Clusters = append(in.Clusters, newCluster("joined"))
	in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound), newBinding("b", snapshot, placementv1beta1.BindingStateScheduled)}
	res = schedule(t, in)
	equal(t, "created", created(res), []string{"joined"})
	equal(t, "unscheduled", res.Unschedule, nil)
	equal(t, "selected", selected(res), []string{"a", "b", "joined"})
	if !res.Fulfilled {
		t.Errorf("not fulfilled: %s", res.Message)
	}
}

func TestPickNZero(t *testing.T) {
	in := newInput(pickN(0), newCluster("a"))
	in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "unscheduled", res.Unschedule, []string{"b-a"})
	if len(res.Create) != 0 || len(res.Decisions) != 0 || !res.Fulfilled {
		t.Errorf("result = %+v", res)
	}
}

func TestPickNRequiredAndPreferredAffinity(t *testing.T) {
	policy := withRequired(pickN(3), labelTerm("critical-allowed", "true"))
	withPreferred(policy,
		placementv1beta1.PreferredClusterSelector{Weight: 20, Preference: labelTerm("critical-level", "1")},
		placementv1beta1.PreferredClusterSelector{Weight: -5, Preference: labelTerm("spot", "true")},
	)
	res := schedule(t, newInput(policy,
		newCluster("a", labeled("critical-allowed", "true")),
		newCluster("b", labeled("critical-allowed", "true", "critical-level", "1")),
		newCluster("c", labeled("critical-allowed", "true", "critical-level", "1", "spot", "true")),
		newCluster("d", labeled("critical-allowed", "true", "spot", "true")),
		newCluster("z", labeled("critical-level", "1")),
	))
	equal(t, "created", created(res), []string{"a", "b", "c"})
	for name, want := range map[string]int32{"a": 0, "b": 20, "c": 15} {
		if a, _ := scoresOf(decisionFor(t, res, name)); a != want {
			t.Errorf("affinity score of %s = %d, want %d", name, a, want)
		}
	}
	got := reasons(res)
	if got["d"] != `Cluster "d" does not score high enough (affinity score: -5, topology spread score: 0)` ||
		got["z"] != "cluster does not match with any of the required cluster affinity terms" {
		t.Errorf("reasons = %v", got)
	}
}

// affinityScores schedules one cluster out of the given ones and returns
// every cluster's affinity score, read from the decisions.
func affinityScores(t *testing.T, policy *placementv1beta1.PlacementPolicy, clusters ...*clusterv1beta1.MemberCluster) (map[string]int32, []string) {
	t.Helper()
	res := schedule(t, newInput(policy, clusters...))
	scores := map[string]int32{}
	for _, d := range res.Decisions {
		scores[d.ClusterName], _ = scoresOf(d)
	}
	return scores, created(res)
}

// The worked examples of the property-based scheduling guide, weight 100.
func TestPickNPropertySorterExamples(t *testing.T) {
	cpu := string(clusterv1beta1.AvailableCPUCapacityProperty)
	scores, picked := affinityScores(t, withPreferred(pickN(1), sorterTerm(100, cpu, placementv1beta1.Descending)),
		newCluster("bravelion", withAvailableCPU("100")), newCluster("smartfish", withAvailableCPU("20")), newCluster("jumpingcat", withAvailableCPU("10")))
	// 100%, 11.11%, 0% of the weight.
	if want := map[string]int32{"bravelion": 100, "smartfish": 11, "jumpingcat": 0}; !mapsEqual(scores, want) {
		t.Errorf("descending scores = %v, want %v", scores, want)
	}
	equal(t, "descending pick", picked, []string{"bravelion"})

	cost := string(clusterv1beta1.PerCPUCoreCostProperty)
	scores, picked = affinityScores(t, withPreferred(pickN(2), sorterTerm(100, cost, placementv1beta1.Ascending)),
		newCluster("bravelion", withProperty(clusterv1beta1.PerCPUCoreCostProperty, "1")),
		newCluster("smartfish", withProperty(clusterv1beta1.PerCPUCoreCostProperty, "0.2")),
		newCluster("jumpingcat", withProperty(clusterv1beta1.PerCPUCoreCostProperty, "0.1")))
	// 0%, 88.89%, 100% of the weight (rounded to the nearest integer).
	if want := map[string]int32{"bravelion": 0, "smartfish": 89, "jumpingcat": 100}; !mapsEqual(scores, want) {
		t.Errorf("ascending scores = %v, want %v", scores, want)
	}
	equal(t, "ascending picks", picked, []string{"jumpingcat", "smartfish"})
}

func TestPickNPropertySorterEdgeCases(t *testing.T) {
	nodes := string(clusterv1beta1.NodeCountProperty)
	withNodes := func(n string) clusterOpt { return withProperty(clusterv1beta1.NodeCountProperty, n) }
	t.Run("same value across the board gives the full weight", func(t *testing.T) {
		scores, _ := affinityScores(t, withPreferred(pickN(1), sorterTerm(20, nodes, placementv1beta1.Descending)),
			newCluster("a", withNodes("3")), newCluster("b", withNodes("3")))
		if want := map[string]int32{"a": 20, "b": 20}; !mapsEqual(scores, want) {
			t.Errorf("scores = %v, want %v", scores, want)
		}
	})
	t.Run("a cluster without the property gets nothing", func(t *testing.T) {
		scores, picked := affinityScores(t, withPreferred(pickN(1), sorterTerm(20, nodes, placementv1beta1.Ascending)),
			newCluster("a", withNodes("3")), newCluster("b", withNodes("9")), newCluster("z"))
		if want := map[string]int32{"a": 20, "b": 0, "z": 0}; !mapsEqual(scores, want) {
			t.Errorf("scores = %v, want %v", scores, want)
		}
		equal(t, "picked", picked, []string{"a"})
	})
	t.Run("label selector and sorter in one preferred term, plus a second term", func(t *testing.T) {
		term := sorterTerm(20, nodes, placementv1beta1.Descending)
		term.Preference.LabelSelector = labelTerm("env", "prod").LabelSelector
		scores, _ := affinityScores(t, withPreferred(pickN(1), term, placementv1beta1.PreferredClusterSelector{Weight: 5, Preference: labelTerm("region", "east")}),
			newCluster("prod-small", labeled("env", "prod"), withNodes("2")),
			newCluster("prod-big", labeled("env", "prod", "region", "east"), withNodes("6")),
			newCluster("dev-huge", labeled("env", "dev", "region", "east"), withNodes("100")))
		// min/max come from the clusters matching the term: dev-huge is out.
		if want := map[string]int32{"prod-small": 0, "prod-big": 25, "dev-huge": 5}; !mapsEqual(scores, want) {
			t.Errorf("scores = %v, want %v", scores, want)
		}
	})
}

func mapsEqual(a, b map[string]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// regions returns n clusters per region, named <region>-<i>.
func regions(n int, names ...string) []*clusterv1beta1.MemberCluster {
	var out []*clusterv1beta1.MemberCluster
	for _, r := range names {
		for i := range n {
			out = append(out, newCluster(fmt.Sprintf("%s-%d", r, i), labeled("region", r)))
		}
	}
	return out
}

func countBy(res framework.Result, clusters []*clusterv1beta1.MemberCluster, label string) map[string]int32 {
	byName := map[string]string{}
	for _, mc := range clusters {
		byName[mc.Name] = mc.Labels[label]
	}
	counts := map[string]int32{}
	for _, name := range selected(res) {
		counts[byName[name]]++
	}
	return counts
}

func TestPickNTopologySpread(t *testing.T) {
	tests := []struct {
		name     string
		n        int32
		clusters []*clusterv1beta1.MemberCluster
		when     placementv1beta1.UnsatisfiableConstraintAction
		maxSkew  int32
		want     map[string]int32
		rejected map[string]string
	}{
		{name: "one per region", n: 3, clusters: regions(3, "east", "west", "north"), maxSkew: 1,
			want: map[string]int32{"east": 1, "west": 1, "north": 1}},
		{name: "four over three regions", n: 4, clusters: regions(3, "east", "west", "north"), maxSkew: 1,
			want: map[string]int32{"east": 1, "west": 2, "north": 1}},
		{name: "DoNotSchedule stops at max skew", n: 5,
			clusters: append(regions(4, "east"), append(regions(1, "west"), newCluster("unlabelled"))...), maxSkew: 1,
			want: map[string]int32{"east": 2, "west": 1},
			rejected: map[string]string{
				"east-0":     `violated doNotSchedule topology spread constraint "region" (max skew 1)`,
				"unlabelled": `cluster does not have the topology key "region" of a doNotSchedule topology spread constraint`,
			}},
		{name: "larger max skew", n: 5, clusters: append(regions(4, "east"), regions(1, "west")...), maxSkew: 2,
			want: map[string]int32{"east": 3, "west": 1}},
		{name: "ScheduleAnyway spreads first, then fills", n: 5,
			clusters: append(regions(4, "east"), append(regions(1, "west"), newCluster("unlabelled"))...), maxSkew: 1,
			when: placementv1beta1.ScheduleAnyway, want: map[string]int32{"east": 4, "west": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := pickN(tt.n)
			policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{spread("region", tt.maxSkew, tt.when)}
			res := schedule(t, newInput(policy, tt.clusters...))
			if got := countBy(res, tt.clusters, "region"); !mapsEqual(got, tt.want) {
				t.Errorf("picks per region = %v, want %v", got, tt.want)
			}
			got := reasons(res)
			for name, want := range tt.rejected {
				if got[name] != want {
					t.Errorf("reason for %s = %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

func TestPickNTopologySpreadCountsExistingBindings(t *testing.T) {
	clusters := regions(2, "east", "west", "north")
	policy := pickN(4)
	policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{spread("region", 1, placementv1beta1.DoNotSchedule)}
	in := newInput(policy, clusters...)
	in.Bindings = []framework.Binding{newBinding("east-0", snapshot, placementv1beta1.BindingStateBound), newBinding("east-1", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	if got := countBy(res, clusters, "region"); !mapsEqual(got, map[string]int32{"east": 2, "west": 1, "north": 1}) {
		t.Errorf("picks per region = %v", got)
	}
	equal(t, "unscheduled", res.Unschedule, nil)
}

func TestPickNTopologySpreadAndAffinity(t *testing.T) {
	clusters := []*clusterv1beta1.MemberCluster{
		newCluster("east-a", labeled("region", "east", "tier", "gold")),
		newCluster("east-b", labeled("region", "east")),
		newCluster("west-a", labeled("region", "west")),
		newCluster("west-b", labeled("region", "west", "tier", "gold")),
		newCluster("west-c", labeled("region", "west", "tier", "gold")),
	}
	policy := withPreferred(pickN(2), placementv1beta1.PreferredClusterSelector{Weight: 10, Preference: labelTerm("tier", "gold")})
	policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{spread("region", 1, placementv1beta1.ScheduleAnyway)}
	res := schedule(t, newInput(policy, clusters...))
	// Topology first (one per region), then affinity (gold), then name.
	equal(t, "created", created(res), []string{"east-a", "west-c"})
}

func TestPickNTolerations(t *testing.T) {
	policy := withRequired(pickN(3), labelTerm("env", "prod"))
	clusters := []*clusterv1beta1.MemberCluster{
		newCluster("a", labeled("env", "prod")),
		newCluster("b", labeled("env", "prod"), tainted("maintenance", "true")),
		newCluster("c", labeled("env", "prod"), tainted("gpu", "a100")),
	}
	res := schedule(t, newInput(policy, clusters...))
	equal(t, "created", created(res), []string{"a"})
	if res.Fulfilled {
		t.Errorf("fulfilled with one of three clusters")
	}
	policy.Tolerations = []placementv1beta1.Toleration{{Key: "gpu", Operator: "Exists"}}
	in := newInput(policy, clusters...)
	in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound)}
	res = schedule(t, in)
	equal(t, "created after toleration added", created(res), []string{"c"})
}

func TestPickNScaleUpTouchesOnlyTheDelta(t *testing.T) {
	clusters := []*clusterv1beta1.MemberCluster{newCluster("a"), newCluster("b"), newCluster("c"), newCluster("d"), newCluster("e")}
	in := newInput(pickN(4), clusters...)
	in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound), newBinding("b", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "created", created(res), []string{"d", "e"})
	equal(t, "patched", patched(res), nil)
	equal(t, "unscheduled", res.Unschedule, nil)
	equal(t, "selected", selected(res), []string{"a", "b", "d", "e"})
}

func TestPickNScaleDownPrefersScheduledAndLowScores(t *testing.T) {
	scored := func(b framework.Binding, affinity int32) framework.Binding {
		zero := int32(0)
		b.ClusterDecision.ClusterScore = &placementv1beta1.ClusterScore{AffinityScore: &affinity, TopologySpreadScore: &zero}
		return b
	}
	clusters := []*clusterv1beta1.MemberCluster{newCluster("a"), newCluster("b"), newCluster("c"), newCluster("d"), newCluster("e")}
	in := newInput(pickN(2), clusters...)
	in.Bindings = []framework.Binding{
		scored(newBinding("a", snapshot, placementv1beta1.BindingStateBound), 1),
		scored(newBinding("b", snapshot, placementv1beta1.BindingStateBound), 5),
		scored(newBinding("c", snapshot, placementv1beta1.BindingStateScheduled), 9),
		scored(newBinding("d", snapshot, placementv1beta1.BindingStateScheduled), 3),
		newBinding("e", "crp-0", placementv1beta1.BindingStateBound),
	}
	res := schedule(t, in)
	// Both Scheduled go first, then the lowest scored Bound one; obsolete always.
	equal(t, "unscheduled", res.Unschedule, []string{"b-c", "b-d", "b-e"})
	equal(t, "selected", selected(res), []string{"a", "b"})
	if len(res.Create) != 0 || len(res.Patch) != 0 || !res.Fulfilled {
		t.Errorf("result = %+v", res)
	}

	in.NumberOfClusters = 3
	res = schedule(t, in)
	equal(t, "unscheduled when removing one", res.Unschedule, []string{"b-d", "b-e"})
}

func TestPickNReplacesClusterThatLeft(t *testing.T) {
	for name, opt := range map[string]clusterOpt{"left": left, "deleting": deleting} {
		t.Run(name, func(t *testing.T) {
			in := newInput(pickN(2), newCluster("a"), newCluster("b", opt), newCluster("c"))
			in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound), newBinding("b", snapshot, placementv1beta1.BindingStateBound)}
			res := schedule(t, in)
			equal(t, "unscheduled", res.Unschedule, []string{"b-b"})
			equal(t, "created", created(res), []string{"c"})
			equal(t, "selected", selected(res), []string{"a", "c"})
		})
	}
	in := newInput(pickN(1), newCluster("c"))
	in.Bindings = []framework.Binding{newBinding("deleted", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "deleted cluster unscheduled", res.Unschedule, []string{"b-deleted"})
	equal(t, "deleted cluster replaced", created(res), []string{"c"})
}

// A member that stops heart-beating keeps its place: PickN does not replace
// it until it leaves or the placement changes.
func TestPickNKeepsUnhealthyCluster(t *testing.T) {
	for name, opt := range map[string]clusterOpt{"unhealthy": unhealthy, "silent": silent} {
		t.Run(name, func(t *testing.T) {
			in := newInput(pickN(2), newCluster("a"), newCluster("b", opt), newCluster("c"))
			in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound), newBinding("b", snapshot, placementv1beta1.BindingStateBound)}
			res := schedule(t, in)
			equal(t, "selected", selected(res), []string{"a", "b"})
			if len(res.Create)+len(res.Patch)+len(res.Unschedule) != 0 || !res.Fulfilled {
				t.Errorf("result = %+v, want no changes", res)
			}
		})
	}
}

func TestPickNLabelChangeDoesNotUnpick(t *testing.T) {
	policy := withRequired(pickN(2), labelTerm("env", "prod"))
	policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{spread("region", 1, placementv1beta1.DoNotSchedule)}
	in := newInput(policy,
		newCluster("a", labeled("env", "dev", "region", "east")), // was prod when picked
		newCluster("b", labeled("env", "prod", "region", "west")),
		newCluster("c", labeled("env", "prod", "region", "east")),
	)
	in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound), newBinding("b", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "selected", selected(res), []string{"a", "b"})
	if len(res.Create)+len(res.Patch)+len(res.Unschedule) != 0 {
		t.Errorf("result = %+v, want no changes", res)
	}
}

func TestPickNPolicyChangePrefersObsoleteBindings(t *testing.T) {
	in := newInput(withRequired(pickN(2), labelTerm("env", "prod")),
		newCluster("a", labeled("env", "prod")), newCluster("b", labeled("env", "prod")),
		newCluster("c", labeled("env", "prod")), newCluster("d", labeled("env", "dev")))
	in.Bindings = []framework.Binding{
		newBinding("a", "crp-0", placementv1beta1.BindingStateBound),
		newBinding("d", "crp-0", placementv1beta1.BindingStateBound),
	}
	res := schedule(t, in)
	// a is kept over the better named b and c; d no longer matches.
	equal(t, "patched", patched(res), []string{"b-a"})
	equal(t, "created", created(res), []string{"c"})
	equal(t, "unscheduled", res.Unschedule, []string{"b-d"})
}

func TestPickNDuplicateBindingsAreUnscheduled(t *testing.T) {
	in := newInput(pickN(1), newCluster("a"))
	dup := newBinding("a", snapshot, placementv1beta1.BindingStateScheduled)
	dup.Name = "b-a-dup"
	in.Bindings = []framework.Binding{dup, newBinding("a", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "unscheduled", res.Unschedule, []string{"b-a-dup"})
	if !slices.Equal(selected(res), []string{"a"}) || len(res.Create) != 0 {
		t.Errorf("result = %+v", res)
	}
}
