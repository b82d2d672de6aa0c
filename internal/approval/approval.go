// Package approval approves a stage of a staged update run, as a person
// does with `kubectl fleet approve` or on the board: it sets the approval
// request's Approved condition with a status merge patch.
package approval

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// ReasonApprovedByUser is the Approved condition's reason when a person
// approved the stage.
const ReasonApprovedByUser = "ApprovedByUser"

// NewRequest returns an empty approval request of a kind as users name
// it: the kind, its plural or its short name, in any case.
func NewRequest(kind string) (placementv1beta1.ApprovalRequestObj, error) {
	switch kind {
	case "clusterapprovalrequest", "clusterapprovalrequests", "careq", "ClusterApprovalRequest":
		return &placementv1beta1.ClusterApprovalRequest{}, nil
	case "approvalrequest", "approvalrequests", "areq", "ApprovalRequest":
		return &placementv1beta1.ApprovalRequest{}, nil
	}
	return nil, fmt.Errorf("cannot approve a %q: the kind must be clusterapprovalrequest (for ClusterStagedUpdateRuns) or approvalrequest (for StagedUpdateRuns)", kind)
}

// Approve sets req's Approved condition to True with message.
func Approve(ctx context.Context, c client.Client, req placementv1beta1.ApprovalRequestObj, message string) error {
	patch := client.MergeFrom(req.DeepCopyObject().(client.Object))
	st := req.GetApprovalRequestStatus()
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: placementv1beta1.ApprovalRequestConditionApproved, Status: metav1.ConditionTrue, Reason: ReasonApprovedByUser,
		Message: message, ObservedGeneration: req.GetGeneration(), LastTransitionTime: metav1.NewTime(time.Now()),
	})
	if err := c.Status().Patch(ctx, req, patch); err != nil {
		return fmt.Errorf("approving %s: %w", req.GetName(), err)
	}
	return nil
}
