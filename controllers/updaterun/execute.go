package updaterun

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// world is what one reconcile of a run sees.
type world struct {
	now        time.Time
	run        string
	generation int64
	state      placementv1beta1.UpdateRunState
	// snapshot is the resource snapshot (master) the run rolls out.
	snapshot   string
	reportDiff bool
	// strategy is the frozen apply strategy the bindings get.
	strategy *placementv1beta1.ApplyStrategy
	// bindings of the placement that are not being deleted, by target
	// cluster; the cache shows this controller's own last writes.
	bindings map[string]placementv1beta1.BindingObj
	// deleting are the clusters whose binding is being deleted.
	deleting map[string]bool
	// listed are all the placement's bindings, as read.
	listed []placementv1beta1.BindingObj
	// approvals are the run's approval requests, by name.
	approvals map[string]approval
}

type approval struct{ approved, accepted bool }

// steps are the writes one reconcile makes besides the run's status.
type steps struct {
	// bind are the clusters whose binding to move to the snapshot.
	bind []placementv1beta1.ClusterUpdatingStatus
	// remove are the clusters whose binding to delete.
	remove []string
	// request are the approval requests to create.
	request []approvalRequest
	// accept are the approved requests to mark accepted.
	accept []string
	// requeue is when a timed wait ends.
	requeue time.Duration
	// displaced names a cluster whose binding someone else moved off
	// what this run rolled out there: the run cannot go on.
	displaced string
}

type approvalRequest struct{ name, stage, taskType string }

// advance moves the run as far as it can go now, writing the progress into
// st and returning the writes that make it happen. Stages run in order; a
// stopped run finishes the clusters it is updating and starts nothing new.
func advance(st *placementv1beta1.UpdateRunStatus, w world) steps {
	var out steps
	stages := st.UpdateStrategySnapshot.Stages
	for i := range st.StagesStatus {
		if !runStage(&st.StagesStatus[i], stages[i], w, &out) {
			if out.displaced == "" {
				setRunProgress(st, w, out)
			}
			return out
		}
	}
	if st.DeletionStageStatus == nil || !runDeletionStage(st.DeletionStageStatus, w, &out) {
		setRunProgress(st, w, out)
		return out
	}
	set(&st.Conditions, placementv1beta1.StagedUpdateRunConditionSucceeded, metav1.ConditionTrue, placementv1beta1.UpdateRunSucceededReason,
		"All stages are updated and their tasks are done", w)
	return out
}

// setRunProgress reports a run that is not finished as started, or as
// stopping until the clusters it was updating are done.
func setRunProgress(st *placementv1beta1.UpdateRunStatus, w world, out steps) {
	if w.state == placementv1beta1.UpdateRunStateRun {
		set(&st.Conditions, placementv1beta1.StagedUpdateRunConditionProgressing, metav1.ConditionTrue, placementv1beta1.UpdateRunStartedReason, "", w)
		return
	}
	if n := updating(st); n > 0 {
		set(&st.Conditions, placementv1beta1.StagedUpdateRunConditionProgressing, metav1.ConditionUnknown, placementv1beta1.UpdateRunStoppingReason,
			fmt.Sprintf("The update run is stopping: %d cluster(s) being updated finish first", n), w)
		return
	}
	set(&st.Conditions, placementv1beta1.StagedUpdateRunConditionProgressing, metav1.ConditionFalse, placementv1beta1.UpdateRunStoppedReason,
		"The update run is stopped; set spec.state to Run to resume it", w)
}

// updating counts the clusters started and not yet finished.
func updating(st *placementv1beta1.UpdateRunStatus) int {
	n := 0
	for _, s := range allStages(st) {
		for _, c := range s.Clusters {
			if isTrue(c.Conditions, placementv1beta1.ClusterUpdatingConditionStarted) && !isTrue(c.Conditions, placementv1beta1.ClusterUpdatingConditionSucceeded) {
				n++
			}
		}
	}
	return n
}

// allStages are the run's stages and its deletion stage.
func allStages(st *placementv1beta1.UpdateRunStatus) []placementv1beta1.StageUpdatingStatus {
	out := slices.Clone(st.StagesStatus)
	if st.DeletionStageStatus != nil {
		out = append(out, *st.DeletionStageStatus)
	}
	return out
}

// runStage advances one stage and tells whether it has succeeded.
func runStage(s *placementv1beta1.StageUpdatingStatus, cfg placementv1beta1.StageConfig, w world, out *steps) bool {
	if isTrue(s.Conditions, placementv1beta1.StageUpdatingConditionSucceeded) {
		return true
	}
	if s.StartTime == nil {
		if w.state != placementv1beta1.UpdateRunStateRun || !approvalTasks(s.BeforeStageTaskStatus, s.StageName, placementv1beta1.BeforeStageTaskLabelValue, w, out) {
			if len(s.BeforeStageTaskStatus) > 0 && w.state == placementv1beta1.UpdateRunStateRun {
				set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionFalse, placementv1beta1.StageUpdatingWaitingReason,
					fmt.Sprintf("Waiting for approval request %s before the stage starts", s.BeforeStageTaskStatus[0].ApprovalRequestName), w)
			}
			return false
		}
		t := metav1.NewTime(w.now)
		s.StartTime = &t
		set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionTrue, placementv1beta1.StageUpdatingStartedReason, "", w)
	}
	if !updateClusters(s, cfg, w, out) {
		return false
	}
	progressing := meta.FindStatusCondition(s.Conditions, placementv1beta1.StageUpdatingConditionProgressing)
	if progressing == nil || progressing.Reason != placementv1beta1.StageUpdatingWaitingReason {
		set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionFalse, placementv1beta1.StageUpdatingWaitingReason,
			"All clusters of the stage are updated; waiting for the after-stage tasks", w)
		progressing = meta.FindStatusCondition(s.Conditions, placementv1beta1.StageUpdatingConditionProgressing)
	}
	if !afterStageTasks(s, cfg, progressing.LastTransitionTime.Time, w, out) {
		return false
	}
	t := metav1.NewTime(w.now)
	s.EndTime = &t
	set(&s.Conditions, placementv1beta1.StageUpdatingConditionSucceeded, metav1.ConditionTrue, placementv1beta1.StageUpdatingSucceededReason, "", w)
	return true
}

// updateClusters finishes the clusters whose binding reached the snapshot
// and starts the next ones, at most maxConcurrency at a time; it tells
// whether every cluster of the stage is updated.
func updateClusters(s *placementv1beta1.StageUpdatingStatus, cfg placementv1beta1.StageConfig, w world, out *steps) bool {
	limit := maxConcurrency(cfg, len(s.Clusters))
	inProgress, done := 0, 0
	var waiting []string
	for i := range s.Clusters {
		c := &s.Clusters[i]
		switch {
		case isTrue(c.Conditions, placementv1beta1.ClusterUpdatingConditionSucceeded):
			done++
			continue
		case !isTrue(c.Conditions, placementv1beta1.ClusterUpdatingConditionStarted):
			continue
		}
		ok, why := w.updated(*c)
		if why == displacedWhy {
			out.displaced = c.ClusterName
			return false
		}
		if ok {
			set(&c.Conditions, placementv1beta1.ClusterUpdatingConditionSucceeded, metav1.ConditionTrue, placementv1beta1.ClusterUpdatingSucceededReason, "", w)
			done++
			continue
		}
		inProgress++
		waiting = append(waiting, c.ClusterName+" ("+why+")")
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if w.state != placementv1beta1.UpdateRunStateRun || inProgress >= limit {
			break
		}
		if meta.FindStatusCondition(c.Conditions, placementv1beta1.ClusterUpdatingConditionStarted) != nil {
			continue
		}
		set(&c.Conditions, placementv1beta1.ClusterUpdatingConditionStarted, metav1.ConditionTrue, placementv1beta1.ClusterUpdatingStartedReason, "", w)
		out.bind = append(out.bind, *c)
		inProgress++
		waiting = append(waiting, c.ClusterName+" (binding to "+w.snapshot+")")
	}
	if done == len(s.Clusters) {
		return true
	}
	switch {
	case inProgress > 0:
		set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionTrue, placementv1beta1.StageUpdatingStartedReason,
			"Updating "+strings.Join(waiting, ", "), w)
	case w.state != placementv1beta1.UpdateRunStateRun:
		set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionFalse, placementv1beta1.StageUpdatingStoppedReason,
			"The update run is stopped; set spec.state to Run to resume it", w)
	}
	return false
}

// maxConcurrency resolves a stage's maxConcurrency against its cluster
// count: percentages round down, and at least one cluster updates.
func maxConcurrency(cfg placementv1beta1.StageConfig, clusters int) int {
	v := intstr.FromInt32(1)
	if cfg.MaxConcurrency != nil {
		v = *cfg.MaxConcurrency
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, clusters, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// displacedWhy is why a started cluster's binding no longer serves what
// the run bound it to.
const displacedWhy = "displaced"

// updated tells whether a started cluster's binding serves what the run
// bound it to (its snapshot, overrides and apply strategy) and reports it
// available (or its diff reported, with ReportDiff) for its current
// generation; if not, why not. A binding bound to something else was moved
// by someone else (another run): the cache shows this controller's own
// writes (see placements.UnseenWrites). A failure is waited out, not fatal: an apply
// error on a member may be fixed there, and the placement's status names it.
func (w world) updated(c placementv1beta1.ClusterUpdatingStatus) (bool, string) {
	b := w.bindings[c.ClusterName]
	if b == nil || b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
		return false, "its binding is gone"
	}
	spec := b.GetBindingSpec()
	if spec.State != placementv1beta1.BindingStateBound {
		return false, "binding to " + w.snapshot
	}
	if spec.ResourceSnapshotName != w.snapshot || !applicable(c).Equal(spec.ClusterResourceOverrideSnapshots, spec.ResourceOverrideSnapshots) ||
		!equality.Semantic.DeepEqual(spec.ApplyStrategy, w.strategy) {
		return false, displacedWhy
	}
	final := string(placementv1beta1.ResourceBindingAvailable)
	if w.reportDiff {
		final = string(placementv1beta1.ResourceBindingDiffReported)
	}
	conds := b.GetBindingStatus().Conditions
	if c := meta.FindStatusCondition(conds, final); c != nil && c.ObservedGeneration == b.GetGeneration() && c.Status == metav1.ConditionTrue {
		return true, ""
	}
	for _, t := range []placementv1beta1.ResourceBindingConditionType{placementv1beta1.ResourceBindingOverridden, placementv1beta1.ResourceBindingWorkSynchronized, placementv1beta1.ResourceBindingApplied} {
		if c := meta.FindStatusCondition(conds, string(t)); c != nil && c.ObservedGeneration == b.GetGeneration() && c.Status == metav1.ConditionFalse {
			return false, fmt.Sprintf("%s=False: %s", t, c.Message)
		}
	}
	return false, "waiting for " + final
}

// approvalTasks runs a stage's approval tasks: creates their requests,
// accepts the approved ones, and tells whether all are approved.
func approvalTasks(tasks []placementv1beta1.StageTaskStatus, stage, when string, w world, out *steps) bool {
	created, approved := placementv1beta1.AfterStageTaskApprovalRequestCreatedReason, placementv1beta1.AfterStageTaskApprovalRequestApprovedReason
	if when == placementv1beta1.BeforeStageTaskLabelValue {
		created, approved = placementv1beta1.BeforeStageTaskApprovalRequestCreatedReason, placementv1beta1.BeforeStageTaskApprovalRequestApprovedReason
	}
	all := true
	for i := range tasks {
		t := &tasks[i]
		if t.Type != placementv1beta1.StageTaskTypeApproval || isTrue(t.Conditions, placementv1beta1.StageTaskConditionApprovalRequestApproved) {
			continue
		}
		a, exists := w.approvals[t.ApprovalRequestName]
		if !exists {
			out.request = append(out.request, approvalRequest{name: t.ApprovalRequestName, stage: stage, taskType: when})
		}
		set(&t.Conditions, placementv1beta1.StageTaskConditionApprovalRequestCreated, metav1.ConditionTrue, created, "", w)
		if !a.approved {
			all = false
			continue
		}
		if !a.accepted {
			out.accept = append(out.accept, t.ApprovalRequestName)
		}
		set(&t.Conditions, placementv1beta1.StageTaskConditionApprovalRequestApproved, metav1.ConditionTrue, approved, "", w)
	}
	return all
}

// afterStageTasks runs the timed waits (counted from when the stage's
// clusters were all updated) and approvals after a stage.
func afterStageTasks(s *placementv1beta1.StageUpdatingStatus, cfg placementv1beta1.StageConfig, since time.Time, w world, out *steps) bool {
	all := approvalTasks(s.AfterStageTaskStatus, s.StageName, placementv1beta1.AfterStageTaskLabelValue, w, out)
	for i := range s.AfterStageTaskStatus {
		t := &s.AfterStageTaskStatus[i]
		if t.Type != placementv1beta1.StageTaskTypeTimedWait || isTrue(t.Conditions, placementv1beta1.StageTaskConditionWaitTimeElapsed) {
			continue
		}
		left := since.Add(waitTime(cfg)).Sub(w.now)
		if left > 0 {
			all = false
			if out.requeue == 0 || left < out.requeue {
				out.requeue = left
			}
			continue
		}
		set(&t.Conditions, placementv1beta1.StageTaskConditionWaitTimeElapsed, metav1.ConditionTrue, placementv1beta1.AfterStageTaskWaitTimeElapsedReason, "", w)
	}
	return all
}

func waitTime(cfg placementv1beta1.StageConfig) time.Duration {
	for _, t := range cfg.AfterStageTasks {
		if t.Type == placementv1beta1.StageTaskTypeTimedWait && t.WaitTime != nil {
			return t.WaitTime.Duration
		}
	}
	return 0
}

// runDeletionStage removes the bindings of the clusters the scheduler no
// longer picks, once every stage is done, and tells whether they are gone.
func runDeletionStage(s *placementv1beta1.StageUpdatingStatus, w world, out *steps) bool {
	if isTrue(s.Conditions, placementv1beta1.StageUpdatingConditionSucceeded) {
		return true
	}
	if w.state != placementv1beta1.UpdateRunStateRun && s.StartTime == nil {
		return false
	}
	if s.StartTime == nil {
		t := metav1.NewTime(w.now)
		s.StartTime = &t
		set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionTrue, placementv1beta1.StageUpdatingStartedReason, "", w)
	}
	done := 0
	for i := range s.Clusters {
		c := &s.Clusters[i]
		set(&c.Conditions, placementv1beta1.ClusterUpdatingConditionStarted, metav1.ConditionTrue, placementv1beta1.ClusterUpdatingStartedReason, "", w)
		if w.deleting[c.ClusterName] {
			continue
		}
		if b := w.bindings[c.ClusterName]; b != nil && b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			out.remove = append(out.remove, c.ClusterName)
			continue
		}
		set(&c.Conditions, placementv1beta1.ClusterUpdatingConditionSucceeded, metav1.ConditionTrue, placementv1beta1.ClusterUpdatingSucceededReason, "", w)
		done++
	}
	if done < len(s.Clusters) {
		return false
	}
	t := metav1.NewTime(w.now)
	s.EndTime = &t
	set(&s.Conditions, placementv1beta1.StageUpdatingConditionSucceeded, metav1.ConditionTrue, placementv1beta1.StageUpdatingSucceededReason, "", w)
	return true
}

// set records a condition at the run's generation; the transition time is
// the reconcile's.
func set(conds *[]metav1.Condition, t string, status metav1.ConditionStatus, reason, msg string, w world) {
	meta.SetStatusCondition(conds, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: w.generation, LastTransitionTime: metav1.NewTime(w.now)})
}

func isTrue(conds []metav1.Condition, t string) bool { return meta.IsStatusConditionTrue(conds, t) }
