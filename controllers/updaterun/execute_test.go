package updaterun

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestMaxConcurrency(t *testing.T) {
	for _, tc := range []struct {
		v        *intstr.IntOrString
		clusters int
		want     int
	}{
		{nil, 5, 1},
		{ptr.To(intstr.FromInt32(3)), 5, 3},
		{ptr.To(intstr.FromString("50%")), 5, 2},
		{ptr.To(intstr.FromString("10%")), 5, 1},
		{ptr.To(intstr.FromString("100%")), 4, 4},
	} {
		if got := maxConcurrency(placementv1beta1.StageConfig{MaxConcurrency: tc.v}, tc.clusters); got != tc.want {
			t.Errorf("maxConcurrency(%v, %d) = %d, want %d", tc.v, tc.clusters, got, tc.want)
		}
	}
}

// availableBinding is a binding bound to snapshot and available.
func availableBinding(cluster, snapshot string) placementv1beta1.BindingObj {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Generation = 2
	b.Spec = placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, ResourceSnapshotName: snapshot, TargetCluster: cluster}
	b.Status.Conditions = []metav1.Condition{{Type: string(placementv1beta1.ResourceBindingAvailable), Status: metav1.ConditionTrue, ObservedGeneration: 2}}
	return b
}

func scheduledBinding(cluster string, state placementv1beta1.BindingState) placementv1beta1.BindingObj {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Spec = placementv1beta1.ResourceBindingSpec{State: state, TargetCluster: cluster}
	return b
}

func names(cs []placementv1beta1.ClusterUpdatingStatus) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ClusterName)
	}
	return out
}

// TestAdvanceWalksStagesTasksAndDeletion drives a run through two stages
// (one cluster at a time, then a timed wait; a before-stage approval) and
// the deletion stage, as the world changes between reconciles.
func TestAdvanceWalksStagesTasksAndDeletion(t *testing.T) {
	stages := []placementv1beta1.StageConfig{
		{Name: "one", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"s": "1"}},
			AfterStageTasks: []placementv1beta1.StageTask{{Type: placementv1beta1.StageTaskTypeTimedWait, WaitTime: &metav1.Duration{Duration: time.Minute}}}},
		{Name: "two", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"s": "2"}},
			BeforeStageTasks: []placementv1beta1.StageTask{{Type: placementv1beta1.StageTaskTypeApproval}}},
	}
	planned, err := planStages("run", stages, []member{
		{name: "a", labels: map[string]string{"s": "1"}}, {name: "b", labels: map[string]string{"s": "1"}}, {name: "c", labels: map[string]string{"s": "2"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := &placementv1beta1.UpdateRunStatus{
		UpdateStrategySnapshot: &placementv1beta1.UpdateStrategySpec{Stages: stages},
		StagesStatus:           planned,
		DeletionStageStatus:    &placementv1beta1.StageUpdatingStatus{StageName: placementv1beta1.UpdateRunDeleteStageName, Clusters: []placementv1beta1.ClusterUpdatingStatus{{ClusterName: "gone"}}},
	}
	now := time.Now()
	w := world{now: now, run: "run", state: placementv1beta1.UpdateRunStateRun, snapshot: "p-1-snapshot", approvals: map[string]approval{},
		bindings: map[string]placementv1beta1.BindingObj{
			"a": scheduledBinding("a", placementv1beta1.BindingStateScheduled), "b": scheduledBinding("b", placementv1beta1.BindingStateScheduled),
			"c": scheduledBinding("c", placementv1beta1.BindingStateScheduled), "gone": scheduledBinding("gone", placementv1beta1.BindingStateUnscheduled)}}

	out := advance(st, w)
	if got := names(out.bind); len(got) != 1 || got[0] != "a" {
		t.Fatalf("first step binds %v, want [a] (maxConcurrency 1)", got)
	}
	w.bindings["a"] = availableBinding("a", w.snapshot)
	if got := names(advance(st, w).bind); len(got) != 1 || got[0] != "b" {
		t.Fatalf("second step binds %v, want [b]", got)
	}
	w.bindings["b"] = availableBinding("b", w.snapshot)
	out = advance(st, w)
	if len(out.bind) != 0 || out.requeue != time.Minute {
		t.Fatalf("after stage one: bind %v requeue %v, want nothing bound and a 1m wait", names(out.bind), out.requeue)
	}
	if c := meta.FindStatusCondition(st.StagesStatus[0].Conditions, placementv1beta1.StageUpdatingConditionProgressing); c.Reason != placementv1beta1.StageUpdatingWaitingReason {
		t.Fatalf("stage one progressing %+v, want waiting", c)
	}

	w.now = now.Add(time.Minute)
	out = advance(st, w)
	if len(out.request) != 1 || out.request[0].name != "run-before-two" || out.request[0].taskType != placementv1beta1.BeforeStageTaskLabelValue {
		t.Fatalf("after the wait: requests %+v, want run-before-two", out.request)
	}
	if st.StagesStatus[0].EndTime == nil || st.StagesStatus[1].StartTime != nil {
		t.Fatalf("stage one should have ended and stage two wait for approval")
	}
	w.approvals["run-before-two"] = approval{}
	if out = advance(st, w); len(out.request)+len(out.bind) != 0 {
		t.Fatalf("unapproved: %+v", out)
	}

	w.state = placementv1beta1.UpdateRunStateStop
	w.approvals["run-before-two"] = approval{approved: true}
	if out = advance(st, w); len(out.bind) != 0 {
		t.Fatalf("a stopped run started %v", names(out.bind))
	}
	if c := meta.FindStatusCondition(st.Conditions, placementv1beta1.StagedUpdateRunConditionProgressing); c.Reason != placementv1beta1.UpdateRunStoppedReason {
		t.Fatalf("stopped run progressing %+v", c)
	}

	w.state = placementv1beta1.UpdateRunStateRun
	out = advance(st, w)
	if got := names(out.bind); len(got) != 1 || got[0] != "c" || len(out.accept) != 1 {
		t.Fatalf("resumed: bind %v accept %v, want [c] and the approval accepted", got, out.accept)
	}
	w.bindings["c"] = availableBinding("c", w.snapshot)
	out = advance(st, w)
	if len(out.remove) != 1 || out.remove[0] != "gone" {
		t.Fatalf("deletion stage removes %v, want [gone]", out.remove)
	}
	delete(w.bindings, "gone")
	advance(st, w)
	if !isTrue(st.Conditions, placementv1beta1.StagedUpdateRunConditionSucceeded) {
		t.Fatalf("run not succeeded: %+v", st.Conditions)
	}
}

func TestUpdatedWaitsOutFailuresAndSeesDisplacedBindings(t *testing.T) {
	b := availableBinding("a", "s").(*placementv1beta1.ClusterResourceBinding)
	b.Status.Conditions = []metav1.Condition{{Type: string(placementv1beta1.ResourceBindingApplied), Status: metav1.ConditionFalse, ObservedGeneration: 2, Message: "boom"}}
	w := world{snapshot: "s", bindings: map[string]placementv1beta1.BindingObj{"a": b}}
	if ok, why := w.updated(placementv1beta1.ClusterUpdatingStatus{ClusterName: "a"}); ok || why != "Applied=False: boom" {
		t.Fatalf("updated = %v %q", ok, why)
	}
	w.bindings["a"] = availableBinding("a", "other")
	if ok, why := w.updated(placementv1beta1.ClusterUpdatingStatus{ClusterName: "a"}); ok || why != displacedWhy {
		t.Fatalf("a binding moved to another snapshot: updated = %v %q", ok, why)
	}
	w.bindings["a"] = availableBinding("a", "s")
	if ok, why := w.updated(placementv1beta1.ClusterUpdatingStatus{ClusterName: "a", ClusterResourceOverrideSnapshots: []string{"cro-1"}}); ok || why != displacedWhy {
		t.Fatalf("a binding without the run's overrides: updated = %v %q", ok, why)
	}
	if ok, _ := w.updated(placementv1beta1.ClusterUpdatingStatus{ClusterName: "a"}); !ok {
		t.Fatal("an available binding on the run's snapshot is not updated")
	}
}
