package placement

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// syncNamespaceStatus copies a ClusterResourcePlacement's status into a
// ClusterResourcePlacementStatus in the one namespace it selects, when the
// placement asks for statusReportingScope NamespaceAccessible: users who may
// only read that namespace can follow the placement. It records the outcome
// as the StatusSynced condition in status.
func syncNamespaceStatus(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, status *placementv1beta1.PlacementStatus) {
	crp, ok := p.(*placementv1beta1.ClusterResourcePlacement)
	if !ok || crp.Spec.StatusReportingScope != placementv1beta1.NamespaceAccessible {
		return
	}
	cond := metav1.Condition{Type: string(placementv1beta1.ClusterResourcePlacementStatusSyncedConditionType), ObservedGeneration: crp.Generation,
		Status: metav1.ConditionTrue, Reason: placementv1beta1.StatusSyncSucceededReason}
	ns := selectedNamespace(crp)
	err := writeNamespaceStatus(ctx, c, crp, ns, status)
	if err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, placementv1beta1.StatusSyncFailedReason
		cond.Message = fmt.Sprintf("Failed to copy the status into ClusterResourcePlacementStatus %s/%s: %v", ns, crp.Name, err)
	} else {
		cond.Message = fmt.Sprintf("The status is copied into ClusterResourcePlacementStatus %s/%s", ns, crp.Name)
	}
	meta.SetStatusCondition(&status.Conditions, cond)
}

func selectedNamespace(crp *placementv1beta1.ClusterResourcePlacement) string {
	for _, t := range crp.Spec.ResourceSelectors {
		if t.Group == "" && t.Kind == "Namespace" {
			return t.Name
		}
	}
	return ""
}

func writeNamespaceStatus(ctx context.Context, c client.Client, crp *placementv1beta1.ClusterResourcePlacement, ns string, status *placementv1beta1.PlacementStatus) error {
	if ns == "" {
		return fmt.Errorf("the Namespace selector has no name")
	}
	// The copy leaves out the condition about itself.
	copied := *status.DeepCopy()
	meta.RemoveStatusCondition(&copied.Conditions, string(placementv1beta1.ClusterResourcePlacementStatusSyncedConditionType))
	crps := &placementv1beta1.ClusterResourcePlacementStatus{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: crp.Name}, crps)
	switch {
	case apierrors.IsNotFound(err):
		crps = &placementv1beta1.ClusterResourcePlacementStatus{
			ObjectMeta:      metav1.ObjectMeta{Namespace: ns, Name: crp.Name},
			PlacementStatus: copied, LastUpdatedTime: metav1.Now(),
		}
		if err := controllerutil.SetOwnerReference(crp, crps, c.Scheme()); err != nil {
			return err
		}
		return c.Create(ctx, crps)
	case err != nil:
		return err
	case equality.Semantic.DeepEqual(crps.PlacementStatus, copied):
		return nil
	}
	crps.PlacementStatus, crps.LastUpdatedTime = copied, metav1.Now()
	return c.Update(ctx, crps)
}
