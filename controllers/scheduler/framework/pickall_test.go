package framework_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func TestPickAllNoPolicyPicksEveryEligibleCluster(t *testing.T) {
	res := schedule(t, newInput(nil,
		newCluster("a"), newCluster("b"),
		newCluster("not-joined", left), newCluster("unhealthy", unhealthy),
		newCluster("silent", silent), newCluster("deleting", deleting),
	))
	equal(t, "created", created(res), []string{"a", "b"})
	equal(t, "selected", selected(res), []string{"a", "b"})
	got := reasons(res)
	for name, want := range map[string]string{
		"not-joined": "its member agent is no longer joined",
		"unhealthy":  "unhealthy (MemberAgentHeartbeatLost)",
		"silent":     "no heartbeat from the member agent within 5m0s",
		"deleting":   "cluster is leaving the fleet",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("reason for %s = %q, want it to contain %q", name, got[name], want)
		}
	}
	if !res.Fulfilled || res.Reason != placementv1beta1.SchedulingPolicyFulfilledReason ||
		res.Message != "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)" {
		t.Errorf("condition = %v %s %q", res.Fulfilled, res.Reason, res.Message)
	}
	if a, tp := scoresOf(decisionFor(t, res, "a")); a != 0 || tp != 0 {
		t.Errorf("PickAll scores = %d/%d, want 0/0", a, tp)
	}
}

func TestPickAllWithLabels(t *testing.T) {
	clusters := func() []*clusterv1beta1.MemberCluster {
		return []*clusterv1beta1.MemberCluster{
			newCluster("east-prod", labeled("region", "east", "env", "prod")),
			newCluster("east-canary", labeled("region", "east", "env", "canary")),
			newCluster("west-prod", labeled("region", "west", "env", "prod")),
			newCluster("none"),
		}
	}
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   []string
	}{
		{"single term, multiple selectors", withRequired(pickAll(), labelTerm("region", "east", "env", "prod")), []string{"east-prod"}},
		{"multiple terms are ORed", withRequired(pickAll(), labelTerm("region", "west"), labelTerm("env", "canary")), []string{"east-canary", "west-prod"}},
		{"no matching clusters", withRequired(pickAll(), labelTerm("region", "south")), nil},
		{"preferred terms are ignored", withPreferred(pickAll(), placementv1beta1.PreferredClusterSelector{Weight: 10, Preference: labelTerm("env", "prod")}),
			[]string{"east-canary", "east-prod", "none", "west-prod"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := schedule(t, newInput(tt.policy, clusters()...))
			equal(t, "selected", selected(res), tt.want)
			if !res.Fulfilled {
				t.Errorf("PickAll not fulfilled: %s", res.Message)
			}
			for name, reason := range reasons(res) {
				if reason != "cluster does not match with any of the required cluster affinity terms" {
					t.Errorf("reason for %s = %q", name, reason)
				}
			}
		})
	}
}

func TestPickAllByProperties(t *testing.T) {
	nodeCount := string(clusterv1beta1.NodeCountProperty)
	clusters := []*clusterv1beta1.MemberCluster{
		newCluster("small", withProperty(clusterv1beta1.NodeCountProperty, "3"), withAvailableCPU("4")),
		newCluster("big", labeled("region", "east"), withProperty(clusterv1beta1.NodeCountProperty, "10"), withAvailableCPU("500m")),
		newCluster("exact", labeled("region", "east"), withProperty(clusterv1beta1.NodeCountProperty, "5"), withAvailableCPU("16")),
		newCluster("unknown"),
	}
	both := labelTerm("region", "east")
	both.PropertySelector = propertyTerm(string(clusterv1beta1.AvailableCPUCapacityProperty), placementv1beta1.PropertySelectorGreaterThan, "1").PropertySelector
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   []string
	}{
		{"node-count Ge 5", withRequired(pickAll(), propertyTerm(nodeCount, placementv1beta1.PropertySelectorGreaterThanOrEqualTo, "5")), []string{"big", "exact"}},
		{"node-count Lt 5", withRequired(pickAll(), propertyTerm(nodeCount, placementv1beta1.PropertySelectorLessThan, "5")), []string{"small"}},
		{"available cpu Ge 2 or node-count Eq 10", withRequired(pickAll(),
			propertyTerm(string(clusterv1beta1.AvailableCPUCapacityProperty), placementv1beta1.PropertySelectorGreaterThanOrEqualTo, "2"),
			propertyTerm(nodeCount, placementv1beta1.PropertySelectorEqualTo, "10")), []string{"big", "exact", "small"}},
		{"label and property in one term", withRequired(pickAll(), both), []string{"exact"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := schedule(t, newInput(tt.policy, clusters...))
			equal(t, "selected", selected(res), tt.want)
			if _, rejected := reasons(res)["unknown"]; !rejected {
				t.Errorf("a cluster without the property must fail the term")
			}
		})
	}
}

func TestPickAllIgnoredDuringExecution(t *testing.T) {
	policy := withRequired(pickAll(), labelTerm("env", "prod"))
	in := newInput(policy,
		newCluster("relabelled", labeled("env", "dev")), // picked when it was prod
		newCluster("tainted-later", labeled("env", "prod"), tainted("k", "v")),
		newCluster("gone-unhealthy", labeled("env", "prod"), unhealthy),
		newCluster("new", labeled("env", "prod")),
	)
	in.Bindings = []framework.Binding{
		newBinding("relabelled", snapshot, placementv1beta1.BindingStateBound),
		newBinding("tainted-later", snapshot, placementv1beta1.BindingStateBound),
		newBinding("gone-unhealthy", snapshot, placementv1beta1.BindingStateScheduled),
		newBinding("deleted-cluster", snapshot, placementv1beta1.BindingStateBound),
	}
	res := schedule(t, in)
	// Health only keeps a cluster from new picks: what it holds stays.
	equal(t, "selected", selected(res), []string{"gone-unhealthy", "new", "relabelled", "tainted-later"})
	equal(t, "created", created(res), []string{"new"})
	equal(t, "unscheduled", res.Unschedule, []string{"b-deleted-cluster"})
	equal(t, "patched", patched(res), nil)
}

func TestPickAllAffinityUpdatedReevaluatesObsoleteBindings(t *testing.T) {
	in := newInput(withRequired(pickAll(), labelTerm("env", "prod")),
		newCluster("still-prod", labeled("env", "prod")),
		newCluster("now-dev", labeled("env", "dev")),
	)
	in.Bindings = []framework.Binding{
		newBinding("still-prod", "crp-0", placementv1beta1.BindingStateBound),
		newBinding("now-dev", "crp-0", placementv1beta1.BindingStateBound),
	}
	res := schedule(t, in)
	equal(t, "patched", patched(res), []string{"b-still-prod"})
	equal(t, "unscheduled", res.Unschedule, []string{"b-now-dev"})
	equal(t, "created", created(res), nil)
	if res.Patch[0].Reschedule || res.Patch[0].Decision.ClusterName != "still-prod" || !res.Patch[0].Decision.Selected {
		t.Errorf("patch = %+v", res.Patch[0])
	}
}

func TestPickAllNewClusterOnlyAddsItsBinding(t *testing.T) {
	in := newInput(nil, newCluster("a"), newCluster("b"), newCluster("joined-later"))
	in.Bindings = []framework.Binding{newBinding("a", snapshot, placementv1beta1.BindingStateBound), newBinding("b", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "created", created(res), []string{"joined-later"})
	equal(t, "unscheduled", res.Unschedule, nil)
	equal(t, "patched", patched(res), nil)
}

func TestPickAllRepicksUnscheduledBinding(t *testing.T) {
	in := newInput(nil, newCluster("a"))
	in.Bindings = []framework.Binding{newBinding("a", "crp-0", placementv1beta1.BindingStateUnscheduled)}
	res := schedule(t, in)
	if len(res.Patch) != 1 || !res.Patch[0].Reschedule || res.Patch[0].Name != "b-a" || len(res.Create) != 0 {
		t.Errorf("result = %+v, want the unscheduled binding rescheduled", res)
	}
}

func TestPickAllTolerations(t *testing.T) {
	clusters := func() []*clusterv1beta1.MemberCluster {
		return []*clusterv1beta1.MemberCluster{
			newCluster("plain"),
			newCluster("gpu", tainted("gpu", "true")),
			newCluster("cordoned", tainted(clusterv1beta1.CordonTaintKey, clusterv1beta1.CordonTaintValue)),
		}
	}
	tests := []struct {
		name        string
		tolerations []placementv1beta1.Toleration
		want        []string
	}{
		{"no tolerations", nil, []string{"plain"}},
		{"equal toleration", []placementv1beta1.Toleration{{Key: "gpu", Value: "true"}}, []string{"gpu", "plain"}},
		{"exists toleration", []placementv1beta1.Toleration{{Key: clusterv1beta1.CordonTaintKey, Operator: "Exists"}}, []string{"cordoned", "plain"}},
		{"empty key exists tolerates all", []placementv1beta1.Toleration{{Operator: "Exists"}}, []string{"cordoned", "gpu", "plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pickAll()
			p.Tolerations = tt.tolerations
			res := schedule(t, newInput(p, clusters()...))
			equal(t, "selected", selected(res), tt.want)
		})
	}
	res := schedule(t, newInput(nil, clusters()...))
	if got := reasons(res)["gpu"]; got != "taint {Key:gpu Value:true Effect:NoSchedule} cannot be tolerated" {
		t.Errorf("taint reason = %q", got)
	}
}

func TestPickAllTenantGrant(t *testing.T) {
	in := newInput(nil, newCluster("mine"), newCluster("theirs"), newCluster("revoked"))
	in.Granted = func(mc *clusterv1beta1.MemberCluster) bool { return mc.Name == "mine" }
	in.Bindings = []framework.Binding{newBinding("revoked", snapshot, placementv1beta1.BindingStateBound)}
	res := schedule(t, in)
	equal(t, "selected", selected(res), []string{"mine"})
	equal(t, "unscheduled", res.Unschedule, []string{"b-revoked"})
	if got := reasons(res)["theirs"]; got != `cluster "theirs" is not granted to this placement's workspace` {
		t.Errorf("reason = %q", got)
	}
}

func TestPickAllNamespaceAffinity(t *testing.T) {
	clusters := []*clusterv1beta1.MemberCluster{
		newCluster("has-ns", withNamespaces("app", "other")),
		newCluster("other-ns", withNamespaces("other")),
		newCluster("no-report"),
	}
	rp := newInput(nil, clusters...)
	rp.Namespace = "app"
	res := schedule(t, rp)
	equal(t, "RP selected", selected(res), []string{"has-ns"})
	if got := reasons(res)["other-ns"]; got != `namespace "app" does not exist on the cluster` {
		t.Errorf("reason = %q", got)
	}
	equal(t, "CRP selected", selected(schedule(t, newInput(nil, clusters...))), []string{"has-ns", "no-report", "other-ns"})
}

func TestPickAllInvalidAffinityRejectsEveryCluster(t *testing.T) {
	res := schedule(t, newInput(withRequired(pickAll(),
		propertyTerm(string(clusterv1beta1.NodeCountProperty), placementv1beta1.PropertySelectorGreaterThan, "lots")),
		newCluster("a")))
	if got := reasons(res)["a"]; !strings.HasPrefix(got, "required cluster affinity term 0 is invalid") {
		t.Errorf("reason = %q", got)
	}
}

func TestScheduleIsDeterministic(t *testing.T) {
	var clusters []*clusterv1beta1.MemberCluster
	for i := range 30 {
		clusters = append(clusters, newCluster(fmt.Sprintf("c-%02d", i), labeled("region", fmt.Sprintf("r%d", i%3), "env", []string{"prod", "dev"}[i%2])))
	}
	policy := withRequired(pickN(7), labelTerm("env", "prod"))
	policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{spread("region", 1, placementv1beta1.DoNotSchedule)}
	in := newInput(policy, clusters...)
	in.Bindings = []framework.Binding{newBinding("c-00", "crp-0", placementv1beta1.BindingStateBound), newBinding("c-04", snapshot, placementv1beta1.BindingStateBound)}
	want := schedule(t, in)
	rng := rand.New(rand.NewSource(1))
	for range 10 {
		shuffled := in
		shuffled.Clusters = append([]*clusterv1beta1.MemberCluster(nil), clusters...)
		rng.Shuffle(len(shuffled.Clusters), func(i, j int) {
			shuffled.Clusters[i], shuffled.Clusters[j] = shuffled.Clusters[j], shuffled.Clusters[i]
		})
		shuffled.Bindings = []framework.Binding{in.Bindings[1], in.Bindings[0]}
		if got := schedule(t, shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled input gave a different result:\n got %+v\nwant %+v", got, want)
		}
	}
}

func TestDecisionsAreCapped(t *testing.T) {
	for _, tc := range []struct {
		name                string
		clusters            int
		created, selected   int
		wantDecisionsLength int
	}{
		// Half the clusters are leaving: every picked cluster is listed,
		// then only the first 20 of those not picked.
		{name: "unselected capped at 20", clusters: 1200, created: 600, selected: 600, wantDecisionsLength: 620},
		{name: "at most 1,000 decisions", clusters: 2400, created: 1200, selected: 1000, wantDecisionsLength: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clusters []*clusterv1beta1.MemberCluster
			for i := range tc.clusters {
				opts := []clusterOpt{}
				if i%2 == 0 {
					opts = append(opts, left)
				}
				clusters = append(clusters, newCluster(fmt.Sprintf("c-%04d", i), opts...))
			}
			res := schedule(t, newInput(nil, clusters...))
			if len(res.Decisions) != tc.wantDecisionsLength || len(res.Create) != tc.created {
				t.Fatalf("decisions = %d, created = %d; want %d and %d", len(res.Decisions), len(res.Create), tc.wantDecisionsLength, tc.created)
			}
			for i, d := range res.Decisions {
				if d.Selected != (i < tc.selected) {
					t.Fatalf("decision %d: selected = %v; the %d selected decisions must come first", i, d.Selected, tc.selected)
				}
			}
		})
	}
}
