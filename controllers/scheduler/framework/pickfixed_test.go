package framework_test

import (
	"testing"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func pickFixed(names ...string) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: names}
}

func TestPickFixedValidTargets(t *testing.T) {
	// Taints do not apply to PickFixed.
	res := schedule(t, newInput(pickFixed("b", "a", "a"), newCluster("a"), newCluster("b", tainted("k", "v")), newCluster("c")))
	equal(t, "created", created(res), []string{"a", "b"})
	if !res.Fulfilled || res.Message != "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)" {
		t.Errorf("condition = %v %q", res.Fulfilled, res.Message)
	}
	if len(res.Decisions) != 2 {
		t.Errorf("decisions = %+v, want only the named clusters", res.Decisions)
	}
}

func TestPickFixedInvalidAndMissingTargets(t *testing.T) {
	in := newInput(pickFixed("a", "missing", "gone", "theirs"), newCluster("a"), newCluster("gone", left), newCluster("theirs"))
	in.Granted = func(mc *clusterv1beta1.MemberCluster) bool { return mc.Name != "theirs" }
	res := schedule(t, in)
	equal(t, "created", created(res), []string{"a"})
	got := reasons(res)
	for name, want := range map[string]string{
		"missing": `Specified cluster "missing" is not found`,
		"gone":    "cluster has left the fleet: its member agent is no longer joined",
		"theirs":  `cluster "theirs" is not granted to this placement's workspace`,
	} {
		if got[name] != want {
			t.Errorf("reason for %s = %q, want %q", name, got[name], want)
		}
	}
	if res.Fulfilled || res.Message != "could not find all clusters needed as specified by the scheduling policy, found 1 cluster(s) instead" {
		t.Errorf("condition = %v %q", res.Fulfilled, res.Message)
	}
}

func TestPickFixedSnapshotRefresh(t *testing.T) {
	in := newInput(pickFixed("a", "c"), newCluster("a"), newCluster("b"), newCluster("c"))
	in.Bindings = []framework.Binding{
		newBinding("a", "crp-0", placementv1beta1.BindingStateBound),
		newBinding("b", "crp-0", placementv1beta1.BindingStateBound),
	}
	res := schedule(t, in)
	equal(t, "patched", patched(res), []string{"b-a"})
	equal(t, "created", created(res), []string{"c"})
	equal(t, "unscheduled", res.Unschedule, []string{"b-b"})

	// Current bindings on named clusters are kept even if the cluster is now
	// tainted; bindings on clusters no longer named are unscheduled.
	in.Clusters[0] = newCluster("a", tainted("k", "v"))
	in.Bindings = []framework.Binding{
		newBinding("a", snapshot, placementv1beta1.BindingStateBound),
		newBinding("b", snapshot, placementv1beta1.BindingStateBound),
		newBinding("c", snapshot, placementv1beta1.BindingStateScheduled),
	}
	res = schedule(t, in)
	equal(t, "selected", selected(res), []string{"a", "c"})
	equal(t, "unscheduled", res.Unschedule, []string{"b-b"})
	if len(res.Create)+len(res.Patch) != 0 || !res.Fulfilled {
		t.Errorf("result = %+v", res)
	}
}

func TestPickFixedNamespaceAffinity(t *testing.T) {
	in := newInput(pickFixed("a", "b"), newCluster("a", withNamespaces("app")), newCluster("b"))
	in.Namespace = "app"
	res := schedule(t, in)
	equal(t, "created", created(res), []string{"a"})
	if got := reasons(res)["b"]; got != `namespace "app" does not exist on the cluster` {
		t.Errorf("reason = %q", got)
	}
}
