package eviction

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// allowedBy tells whether a disruption budget allows taking one available
// cluster away from a placement. The total is numberOfClusters for PickN
// and the scheduled clusters for PickAll (which therefore only takes an
// integer minAvailable); percentages round up.
func allowedBy(budget placementv1beta1.PlacementDisruptionBudgetSpec, p placementv1beta1.PlacementObj, bindings []placementv1beta1.BindingObj) (bool, string) {
	pickAll := placementType(p) == placementv1beta1.PickAllPlacementType
	if pickAll && (budget.MaxUnavailable != nil || (budget.MinAvailable != nil && budget.MinAvailable.Type == intstr.String)) {
		return false, blockedMisconfiguredPDB
	}
	total, available := 0, 0
	for _, b := range bindings {
		if !b.GetDeletionTimestamp().IsZero() || b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			continue
		}
		total++
		if c := meta.FindStatusCondition(b.GetBindingStatus().Conditions, string(placementv1beta1.ResourceBindingAvailable)); c != nil &&
			c.ObservedGeneration == b.GetGeneration() && c.Status == metav1.ConditionTrue {
			available++
		}
	}
	if policy := p.GetPlacementSpec().Policy; !pickAll && policy != nil && policy.NumberOfClusters != nil {
		total = int(*policy.NumberOfClusters)
	}
	var disruptions int
	switch {
	case budget.MaxUnavailable != nil:
		disruptions = scaled(*budget.MaxUnavailable, total) - (total - available)
	case budget.MinAvailable != nil:
		disruptions = available - scaled(*budget.MinAvailable, total)
	default:
		// A budget that sets neither field allows any eviction.
		disruptions = 1
	}
	if disruptions > 0 {
		return true, fmt.Sprintf(allowedByPDBFmt, available, total)
	}
	return false, fmt.Sprintf(placementv1beta1.EvictionBlockedByPDBMessageFmt, available, total)
}

func scaled(v intstr.IntOrString, total int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, total, true)
	if err != nil {
		return 0
	}
	return n
}
