package updaterun

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// approvals reads the run's approval requests: which exist, which a user
// approved, and which the run has accepted.
func (r *Reconciler) approvals(ctx context.Context, c client.Reader, run placementv1beta1.UpdateRunObj) (map[string]approval, error) {
	list := r.kinds().newApprovalRequestList()
	opts := []client.ListOption{client.MatchingLabels{placementv1beta1.TargetUpdateRunLabel: run.GetName()}}
	if r.Namespaced {
		opts = append(opts, client.InNamespace(run.GetNamespace()))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	out := map[string]approval{}
	err := meta.EachListItem(list, func(o runtime.Object) error {
		a := o.(placementv1beta1.ApprovalRequestObj)
		conds := a.GetApprovalRequestStatus().Conditions
		out[a.GetName()] = approval{
			approved: meta.IsStatusConditionTrue(conds, placementv1beta1.ApprovalRequestConditionApproved),
			accepted: meta.IsStatusConditionTrue(conds, placementv1beta1.ApprovalRequestConditionApprovalAccepted),
		}
		return nil
	})
	return out, err
}

// requestApproval creates the approval request of a stage task. It is
// labelled and named as KubeFleet's, so tools that find approvals by label
// find these.
func (r *Reconciler) requestApproval(ctx context.Context, c client.Client, run placementv1beta1.UpdateRunObj, a approvalRequest) error {
	req := r.kinds().newApprovalRequest()
	req.SetName(a.name)
	req.SetNamespace(run.GetNamespace())
	req.SetLabels(map[string]string{
		placementv1beta1.TargetUpdateRunLabel:           run.GetName(),
		placementv1beta1.TargetUpdatingStageNameLabel:   a.stage,
		placementv1beta1.TaskTypeLabel:                  a.taskType,
		placementv1beta1.IsLatestUpdateRunApprovalLabel: "true",
	})
	req.SetApprovalRequestSpec(placementv1beta1.ApprovalRequestSpec{TargetUpdateRun: run.GetName(), TargetStage: a.stage})
	if err := controllerutil.SetOwnerReference(run, req, c.Scheme()); err != nil {
		return err
	}
	if err := c.Create(ctx, req); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating approval request %s: %w", a.name, err)
	}
	return nil
}

// acceptApproval tells the approver the run has seen the approval.
func (r *Reconciler) acceptApproval(ctx context.Context, c client.Client, namespace, name string) error {
	req := r.kinds().newApprovalRequest()
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, req); err != nil {
		return client.IgnoreNotFound(err)
	}
	st := req.GetApprovalRequestStatus().DeepCopy()
	if !meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: placementv1beta1.ApprovalRequestConditionApprovalAccepted, Status: metav1.ConditionTrue,
		Reason: placementv1beta1.ApprovalRequestApprovalAcceptedReason, Message: "The update run has accepted the approval", ObservedGeneration: req.GetGeneration(),
	}) {
		return nil
	}
	req.SetApprovalRequestStatus(*st)
	return c.Status().Update(ctx, req)
}

// cleanUp deletes a deleted run's approval requests, then lets it go. The
// bindings stay as the run left them.
func (r *Reconciler) cleanUp(ctx context.Context, c client.Client, run placementv1beta1.UpdateRunObj) error {
	if !controllerutil.ContainsFinalizer(run, placementv1beta1.UpdateRunFinalizer) {
		return nil
	}
	opts := []client.DeleteAllOfOption{client.MatchingLabels{placementv1beta1.TargetUpdateRunLabel: run.GetName()}}
	if r.Namespaced {
		opts = append(opts, client.InNamespace(run.GetNamespace()))
	}
	if err := c.DeleteAllOf(ctx, r.kinds().newApprovalRequest(), opts...); err != nil {
		return fmt.Errorf("deleting the approval requests of %s: %w", run.GetName(), err)
	}
	controllerutil.RemoveFinalizer(run, placementv1beta1.UpdateRunFinalizer)
	return client.IgnoreNotFound(c.Update(ctx, run))
}
