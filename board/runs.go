package board

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// The kinds of approval requests, as the approve call names them.
const (
	kindClusterApprovalRequest = "ClusterApprovalRequest"
	kindApprovalRequest        = "ApprovalRequest"
)

// updateRuns are the placement's staged update runs, newest first.
func (w *workspaceWatch) updateRuns(ctx context.Context, namespace, placement string, mayApprove func(ctx context.Context, kind, namespace string) bool) ([]UpdateRun, error) {
	var runObj, reqObj client.Object = &placementv1beta1.ClusterStagedUpdateRun{}, &placementv1beta1.ClusterApprovalRequest{}
	var runs, reqs client.ObjectList = &placementv1beta1.ClusterStagedUpdateRunList{}, &placementv1beta1.ClusterApprovalRequestList{}
	reqKind := kindClusterApprovalRequest
	if namespace != "" {
		runObj, reqObj = &placementv1beta1.StagedUpdateRun{}, &placementv1beta1.ApprovalRequest{}
		runs, reqs = &placementv1beta1.StagedUpdateRunList{}, &placementv1beta1.ApprovalRequestList{}
		reqKind = kindApprovalRequest
	}
	if err := w.list(ctx, runObj, runs, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if err := w.list(ctx, reqObj, reqs, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	approved := map[string]bool{}
	if err := meta.EachListItem(reqs, func(o runtime.Object) error {
		r := o.(placementv1beta1.ApprovalRequestObj)
		approved[r.GetName()] = meta.IsStatusConditionTrue(r.GetApprovalRequestStatus().Conditions, placementv1beta1.ApprovalRequestConditionApproved)
		return nil
	}); err != nil {
		return nil, err
	}
	type dated struct {
		run     UpdateRun
		created metav1.Time
	}
	var found []dated
	err := meta.EachListItem(runs, func(o runtime.Object) error {
		r := o.(placementv1beta1.UpdateRunObj)
		if r.GetUpdateRunSpec().PlacementName != placement {
			return nil
		}
		st := r.GetUpdateRunStatus()
		run := UpdateRun{Name: r.GetName(), Namespace: r.GetNamespace(), Conditions: conditions(st.Conditions)}
		for _, s := range st.StagesStatus {
			run.Stages = append(run.Stages, stageOf(s, reqKind, approved))
		}
		found = append(found, dated{run, r.GetCreationTimestamp()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(found, func(i, j int) bool { return found[j].created.Before(&found[i].created) })
	sorted := make([]UpdateRun, len(found))
	for i, f := range found {
		sorted[i] = f.run
	}
	markApprovable(ctx, sorted, reqKind, namespace, mayApprove)
	return sorted, nil
}

// markApprovable lets the page offer Approve on requests that wait, when
// the hub would let the caller approve them.
func markApprovable(ctx context.Context, runs []UpdateRun, kind, namespace string, mayApprove func(ctx context.Context, kind, namespace string) bool) {
	var may *bool
	for r := range runs {
		for s := range runs[r].Stages {
			for a := range runs[r].Stages[s].Approvals {
				ap := &runs[r].Stages[s].Approvals[a]
				if !ap.Created || ap.Approved {
					continue
				}
				if may == nil {
					answer := mayApprove(ctx, kind, namespace)
					may = &answer
				}
				ap.CanApprove = *may
			}
		}
	}
}

func stageOf(s placementv1beta1.StageUpdatingStatus, reqKind string, approved map[string]bool) Stage {
	stage := Stage{Name: s.StageName, State: progress(s.Conditions, placementv1beta1.StageUpdatingConditionProgressing)}
	for _, c := range s.Clusters {
		stage.Clusters = append(stage.Clusters, StageCluster{Name: c.ClusterName, State: progress(c.Conditions, placementv1beta1.ClusterUpdatingConditionStarted)})
	}
	for when, tasks := range map[string][]placementv1beta1.StageTaskStatus{"before": s.BeforeStageTaskStatus, "after": s.AfterStageTaskStatus} {
		for _, t := range tasks {
			if t.Type != placementv1beta1.StageTaskTypeApproval {
				continue
			}
			stage.Approvals = append(stage.Approvals, Approval{Name: t.ApprovalRequestName, Kind: reqKind, When: when,
				Created:  meta.IsStatusConditionTrue(t.Conditions, placementv1beta1.StageTaskConditionApprovalRequestCreated),
				Approved: approved[t.ApprovalRequestName] || meta.IsStatusConditionTrue(t.Conditions, placementv1beta1.StageTaskConditionApprovalRequestApproved)})
		}
	}
	sort.Slice(stage.Approvals, func(i, j int) bool { return stage.Approvals[i].When > stage.Approvals[j].When })
	return stage
}

// progress reads a stage's or a cluster's state: succeeded, failed, in
// progress, or not started.
func progress(conds []metav1.Condition, started string) string {
	if c := meta.FindStatusCondition(conds, placementv1beta1.StageUpdatingConditionSucceeded); c != nil {
		if c.Status == metav1.ConditionTrue {
			return "succeeded"
		}
		return "failed"
	}
	if c := meta.FindStatusCondition(conds, started); c != nil {
		if c.Status == metav1.ConditionTrue {
			return "in progress"
		}
		return "waiting"
	}
	return "not started"
}
