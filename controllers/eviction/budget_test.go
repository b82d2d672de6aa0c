package eviction

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func bindings(available, unavailable int) []placementv1beta1.BindingObj {
	var out []placementv1beta1.BindingObj
	for i := 0; i < available+unavailable; i++ {
		b := &placementv1beta1.ClusterResourceBinding{}
		b.Spec.State = placementv1beta1.BindingStateBound
		status := metav1.ConditionTrue
		if i >= available {
			status = metav1.ConditionFalse
		}
		b.Status.Conditions = []metav1.Condition{{Type: string(placementv1beta1.ResourceBindingAvailable), Status: status}}
		out = append(out, b)
	}
	return out
}

func crp(policy *placementv1beta1.PlacementPolicy) placementv1beta1.PlacementObj {
	return &placementv1beta1.ClusterResourcePlacement{Spec: placementv1beta1.PlacementSpec{Policy: policy}}
}

// TestAllowedBy covers the seeds' table of budgets per placement type and
// the arithmetic of each field.
func TestAllowedBy(t *testing.T) {
	pickAll := crp(&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType})
	pickN := func(n int32) placementv1beta1.PlacementObj {
		return crp(&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(n)})
	}
	i, s := intstr.FromInt32, intstr.FromString
	for name, tc := range map[string]struct {
		budget  placementv1beta1.PlacementDisruptionBudgetSpec
		p       placementv1beta1.PlacementObj
		b       []placementv1beta1.BindingObj
		allowed bool
		msg     string
	}{
		"PickAll minAvailable integer, room":    {placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(i(2))}, pickAll, bindings(3, 0), true, "availablePlacements: 3, totalPlacements: 3"},
		"PickAll minAvailable integer, no room": {placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(i(3))}, pickAll, bindings(3, 0), false, "blocked by specified"},
		"PickAll minAvailable percent":          {placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(s("50%"))}, pickAll, bindings(3, 0), false, "misconfigured"},
		"PickAll maxUnavailable":                {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(i(1))}, pickAll, bindings(3, 0), false, "misconfigured"},
		"PickN maxUnavailable counts the unavailable": {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(i(1))}, pickN(3), bindings(2, 1), false,
			"availablePlacements: 2, totalPlacements: 3"},
		"PickN maxUnavailable room":        {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(i(1))}, pickN(3), bindings(3, 0), true, "allowed by specified"},
		"PickN maxUnavailable percent up":  {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(s("10%"))}, pickN(3), bindings(3, 0), true, "allowed"},
		"PickN minAvailable percent up":    {placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(s("50%"))}, pickN(3), bindings(2, 0), false, "blocked"},
		"PickN minAvailable percent room":  {placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(s("50%"))}, pickN(3), bindings(3, 0), true, "allowed"},
		"PickN short of N counts N":        {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(i(1))}, pickN(4), bindings(3, 0), false, "totalPlacements: 4"},
		"empty budget allows":              {placementv1beta1.PlacementDisruptionBudgetSpec{}, pickN(2), bindings(2, 0), true, "allowed"},
		"minAvailable 0 allows the last":   {placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(i(0))}, pickAll, bindings(1, 0), true, "allowed"},
		"maxUnavailable 0 blocks PickN":    {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(i(0))}, pickN(2), bindings(2, 0), false, "blocked"},
		"maxUnavailable 100% allows PickN": {placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(s("100%"))}, pickN(2), bindings(1, 1), true, "allowed"},
	} {
		t.Run(name, func(t *testing.T) {
			allowed, msg := allowedBy(tc.budget, tc.p, tc.b)
			if allowed != tc.allowed || !strings.Contains(msg, tc.msg) {
				t.Fatalf("allowedBy = %v %q, want %v and a message with %q", allowed, msg, tc.allowed, tc.msg)
			}
		})
	}
}
