package workgenerator

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/works"
)

// maxFailedPlacements caps the failed, drifted and diffed resources listed
// on a binding.
const maxFailedPlacements = 100

// bindingStatus derives the binding's Overridden, WorkSynchronized, Applied
// and Available conditions from its Works. RolloutStarted is the rollout's:
// a bound binding the rollout has not reported on for this generation
// (it reports only when the rollout waits) has its rollout started, which is
// reported here with the rest rather than in a write of its own.
func bindingStatus(b placementv1beta1.BindingObj, works []placementv1beta1.Work, syncErr error) placementv1beta1.ResourceBindingStatus {
	gen := b.GetGeneration()
	st := placementv1beta1.ResourceBindingStatus{Conditions: append([]metav1.Condition(nil), b.GetBindingStatus().Conditions...)}
	set := func(t placementv1beta1.ResourceBindingConditionType, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: msg, ObservedGeneration: gen})
	}
	spec := b.GetBindingSpec()
	if c := meta.FindStatusCondition(st.Conditions, string(placementv1beta1.ResourceBindingRolloutStarted)); spec.State == placementv1beta1.BindingStateBound && (c == nil || c.ObservedGeneration != gen) {
		set(placementv1beta1.ResourceBindingRolloutStarted, metav1.ConditionTrue, placementv1beta1.RolloutStartedReason, placements.RolloutStartedMessage(b))
	}
	remove := func(types ...placementv1beta1.ResourceBindingConditionType) {
		for _, t := range types {
			meta.RemoveStatusCondition(&st.Conditions, string(t))
		}
	}
	var failed overrideFailure
	switch {
	case errors.As(syncErr, &failed):
		set(placementv1beta1.ResourceBindingOverridden, metav1.ConditionFalse, placementv1beta1.OverriddenFailedReason, fmt.Sprintf("Failed to apply the override rules on the resources: %v", failed.error))
		remove(placementv1beta1.ResourceBindingWorkSynchronized, placementv1beta1.ResourceBindingApplied, placementv1beta1.ResourceBindingAvailable, placementv1beta1.ResourceBindingDiffReported)
		return st
	case len(spec.ClusterResourceOverrideSnapshots)+len(spec.ResourceOverrideSnapshots) > 0:
		set(placementv1beta1.ResourceBindingOverridden, metav1.ConditionTrue, placementv1beta1.OverriddenSucceededReason, "Successfully applied the override rules on the resources")
	default:
		set(placementv1beta1.ResourceBindingOverridden, metav1.ConditionTrue, placementv1beta1.OverrideNotSpecifiedReason, "No override rules are configured for the selected resources")
	}
	if syncErr != nil {
		set(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionFalse, placementv1beta1.SyncWorkFailedReason, fmt.Sprintf("Failed to synchronize the work to the latest: %v", syncErr))
		remove(placementv1beta1.ResourceBindingApplied, placementv1beta1.ResourceBindingAvailable, placementv1beta1.ResourceBindingDiffReported)
		return st
	}
	set(placementv1beta1.ResourceBindingWorkSynchronized, metav1.ConditionTrue, placementv1beta1.AllWorkSyncedReason, "All of the works are synchronized to the latest")
	st.DriftedPlacements, st.DiffedPlacements = driftedPlacements(works), diffedPlacements(works)

	if spec.ApplyStrategy != nil && spec.ApplyStrategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		// Nothing is applied: the report is the outcome.
		remove(placementv1beta1.ResourceBindingApplied, placementv1beta1.ResourceBindingAvailable)
		reported := summarize(works, placementv1beta1.WorkConditionTypeDiffReported)
		// Each object not compared, with why (not taken over, say); the
		// conditions carry no value of the member's.
		st.FailedPlacements = unreportedDiffs(works)
		switch {
		case reported.failed != "":
			set(placementv1beta1.ResourceBindingDiffReported, metav1.ConditionFalse, placementv1beta1.WorkNotDiffReportedReason, fmt.Sprintf("Work object %s has not reported its differences", reported.failed))
		case reported.pending != "":
			set(placementv1beta1.ResourceBindingDiffReported, metav1.ConditionUnknown, placementv1beta1.DiffReportInProgressReason, fmt.Sprintf("Work object %s is reporting its differences", reported.pending))
		default:
			set(placementv1beta1.ResourceBindingDiffReported, metav1.ConditionTrue, placementv1beta1.AllWorkDiffReportedReason, "All corresponding work objects have reported their differences")
		}
		return st
	}
	remove(placementv1beta1.ResourceBindingDiffReported)

	applied := summarize(works, placementv1beta1.WorkConditionTypeApplied)
	switch {
	case applied.failed != "":
		set(placementv1beta1.ResourceBindingApplied, metav1.ConditionFalse, placementv1beta1.WorkNotAppliedReason, fmt.Sprintf("Work object %s is not applied: %s", applied.failed, applied.failedMessage))
	case applied.pending != "":
		set(placementv1beta1.ResourceBindingApplied, metav1.ConditionUnknown, placementv1beta1.ApplyInProgressReason, fmt.Sprintf("Work object %s is being applied", applied.pending))
	default:
		set(placementv1beta1.ResourceBindingApplied, metav1.ConditionTrue, placementv1beta1.AllWorkAppliedReason, "All corresponding work objects are applied")
	}
	st.FailedPlacements = failedPlacements(works)
	if applied.failed != "" || applied.pending != "" {
		remove(placementv1beta1.ResourceBindingAvailable)
		return st
	}

	available := summarize(works, placementv1beta1.WorkConditionTypeAvailable)
	switch {
	case available.failed != "":
		set(placementv1beta1.ResourceBindingAvailable, metav1.ConditionFalse, placementv1beta1.WorkNotAvailableReason, fmt.Sprintf("Work object %s is not yet available", available.failed))
	case available.pending != "":
		set(placementv1beta1.ResourceBindingAvailable, metav1.ConditionUnknown, placementv1beta1.AvailableUnknownReason, fmt.Sprintf("Work object %s has not reported its availability yet", available.pending))
	case available.untrackable != "":
		set(placementv1beta1.ResourceBindingAvailable, metav1.ConditionTrue, placementv1beta1.WorkNotAvailabilityTrackableReason, fmt.Sprintf("The availability of work object %s is not trackable", available.untrackable))
	default:
		set(placementv1beta1.ResourceBindingAvailable, metav1.ConditionTrue, placementv1beta1.AllWorkAvailableReason, "All corresponding work objects are available")
	}
	return st
}

// summary names one Work in each state of a condition (the first found).
type summary struct {
	failed, pending, untrackable string
	// failedMessage is what the failed Work's condition says.
	failedMessage string
}

func summarize(works []placementv1beta1.Work, t string) summary {
	var s summary
	for _, w := range works {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		switch {
		case c == nil || c.ObservedGeneration != w.Generation || c.Status == metav1.ConditionUnknown:
			s.pending = first(s.pending, w.Name)
		case c.Status == metav1.ConditionFalse:
			if s.failed == "" {
				s.failed, s.failedMessage = w.Name, c.Message
			}
		case c.Reason == placementv1beta1.WorkNotTrackableReason:
			s.untrackable = first(s.untrackable, w.Name)
		}
	}
	return s
}

func first(current, name string) string {
	if current == "" {
		return name
	}
	return current
}

// manifestReport lists, up to maxFailedPlacements, what entry makes of the
// Works' manifests (nothing when it returns false).
func manifestReport[T any](list []placementv1beta1.Work, entry func(placementv1beta1.ResourceIdentifier, placementv1beta1.ManifestCondition) (T, bool)) []T {
	var out []T
	for i := range list {
		for _, mc := range list[i].Status.ManifestConditions {
			if e, ok := entry(works.Identifier(&list[i], mc.Identifier), mc); ok {
				out = append(out, e)
				if len(out) == maxFailedPlacements {
					return out
				}
			}
		}
	}
	return out
}

// failedPlacements lists manifests that failed to apply or are applied but
// not available, with the condition that says why.
func failedPlacements(works []placementv1beta1.Work) []placementv1beta1.FailedResourcePlacement {
	return failedOn(works, func(conds []metav1.Condition) *metav1.Condition {
		c := meta.FindStatusCondition(conds, placementv1beta1.WorkConditionTypeApplied)
		if c == nil || c.Status == metav1.ConditionTrue {
			c = meta.FindStatusCondition(conds, placementv1beta1.WorkConditionTypeAvailable)
		}
		return c
	})
}

// unreportedDiffs lists, for ReportDiff, the manifests whose differences
// were not reported, with the condition that says why.
func unreportedDiffs(works []placementv1beta1.Work) []placementv1beta1.FailedResourcePlacement {
	return failedOn(works, func(conds []metav1.Condition) *metav1.Condition {
		return meta.FindStatusCondition(conds, placementv1beta1.WorkConditionTypeDiffReported)
	})
}

// failedOn lists the manifests whose condition, as pick finds it, is False.
func failedOn(works []placementv1beta1.Work, pick func([]metav1.Condition) *metav1.Condition) []placementv1beta1.FailedResourcePlacement {
	return manifestReport(works, func(id placementv1beta1.ResourceIdentifier, mc placementv1beta1.ManifestCondition) (placementv1beta1.FailedResourcePlacement, bool) {
		c := pick(mc.Conditions)
		if c == nil || c.Status != metav1.ConditionFalse {
			return placementv1beta1.FailedResourcePlacement{}, false
		}
		return placementv1beta1.FailedResourcePlacement{ResourceIdentifier: id, Condition: *c}, true
	})
}

// driftedPlacements lists the manifests the members changed, with the drifts.
func driftedPlacements(works []placementv1beta1.Work) []placementv1beta1.DriftedResourcePlacement {
	return manifestReport(works, func(id placementv1beta1.ResourceIdentifier, mc placementv1beta1.ManifestCondition) (placementv1beta1.DriftedResourcePlacement, bool) {
		d := mc.DriftDetails
		if d == nil {
			return placementv1beta1.DriftedResourcePlacement{}, false
		}
		return placementv1beta1.DriftedResourcePlacement{ResourceIdentifier: id, ObservationTime: d.ObservationTime,
			TargetClusterObservedGeneration: d.ObservedInMemberClusterGeneration, FirstDriftedObservedTime: d.FirstDriftedObservedTime, ObservedDrifts: d.ObservedDrifts}, true
	})
}

// diffedPlacements lists the manifests whose member copies differ (ReportDiff).
func diffedPlacements(works []placementv1beta1.Work) []placementv1beta1.DiffedResourcePlacement {
	return manifestReport(works, func(id placementv1beta1.ResourceIdentifier, mc placementv1beta1.ManifestCondition) (placementv1beta1.DiffedResourcePlacement, bool) {
		d := mc.DiffDetails
		if d == nil {
			return placementv1beta1.DiffedResourcePlacement{}, false
		}
		return placementv1beta1.DiffedResourcePlacement{ResourceIdentifier: id, ObservationTime: d.ObservationTime,
			TargetClusterObservedGeneration: d.ObservedInMemberClusterGeneration, FirstDiffedObservedTime: d.FirstDiffedObservedTime, ObservedDiffs: d.ObservedDiffs}, true
	})
}

// workChanged passes every Work event except updates that change nothing
// the binding reports (resync).
type workChanged struct{ predicate.Funcs }

func (workChanged) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
}
