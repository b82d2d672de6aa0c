package workapplier

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/syncer/availability"
)

// assessAvailability checks an applied manifest's live object.
func assessAvailability(m *manifest) {
	if !m.applied.ok || m.live == nil {
		m.avail = availabilityOutcome{status: string(metav1.ConditionUnknown), reason: placementv1beta1.AvailabilityResultSkipped, message: "the manifest has not been applied"}
		return
	}
	result, msg, err := availability.Check(m.live)
	switch {
	case err != nil:
		m.avail = availabilityOutcome{status: string(metav1.ConditionFalse), reason: placementv1beta1.AvailabilityResultFailed, message: err.Error()}
	case result == availability.Available:
		m.avail = availabilityOutcome{status: string(metav1.ConditionTrue), reason: placementv1beta1.AvailabilityResultAvailable, message: "the object is available"}
	case result == availability.NotTrackable:
		m.avail = availabilityOutcome{status: string(metav1.ConditionTrue), reason: placementv1beta1.AvailabilityResultNotTrackable, message: msg}
	default:
		m.avail = availabilityOutcome{status: string(metav1.ConditionFalse), reason: placementv1beta1.AvailabilityResultNotYetAvailable, message: msg}
	}
}

// buildStatus derives the Work status from the manifests' outcomes, keeping
// the transition times of conditions that did not change.
func buildStatus(work *placementv1beta1.Work, ms []*manifest, now metav1.Time) placementv1beta1.WorkStatus {
	previous := map[int][]metav1.Condition{}
	for _, mc := range work.Status.ManifestConditions {
		previous[mc.Identifier.Ordinal] = mc.Conditions
	}
	status := placementv1beta1.WorkStatus{Conditions: append([]metav1.Condition(nil), work.Status.Conditions...)}
	var failed, notAvailable, untrackable int
	for _, m := range ms {
		conds := append([]metav1.Condition(nil), previous[m.id.Ordinal]...)
		applied := metav1.Condition{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionTrue,
			Reason: m.applied.reason, Message: m.applied.message, ObservedGeneration: work.Generation, LastTransitionTime: now}
		if !m.applied.ok {
			applied.Status = metav1.ConditionFalse
			failed++
		}
		meta.SetStatusCondition(&conds, applied)
		meta.SetStatusCondition(&conds, metav1.Condition{Type: placementv1beta1.WorkConditionTypeAvailable, Status: metav1.ConditionStatus(m.avail.status),
			Reason: m.avail.reason, Message: m.avail.message, ObservedGeneration: work.Generation, LastTransitionTime: now})
		switch {
		case m.avail.reason == placementv1beta1.AvailabilityResultNotTrackable:
			untrackable++
		case m.avail.status != string(metav1.ConditionTrue):
			notAvailable++
		}
		status.ManifestConditions = append(status.ManifestConditions, placementv1beta1.ManifestCondition{Identifier: m.id, Conditions: conds})
	}

	applied := metav1.Condition{Type: placementv1beta1.WorkConditionTypeApplied, ObservedGeneration: work.Generation, LastTransitionTime: now,
		Status: metav1.ConditionTrue, Reason: placementv1beta1.WorkAllManifestsAppliedReason, Message: "all manifests have been applied"}
	if failed > 0 {
		applied.Status, applied.Reason = metav1.ConditionFalse, placementv1beta1.WorkNotAllManifestsAppliedReason
		applied.Message = fmt.Sprintf("%d of %d manifests have not been applied; see manifestConditions", failed, len(ms))
	}
	meta.SetStatusCondition(&status.Conditions, applied)
	if failed > 0 {
		meta.RemoveStatusCondition(&status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
		return status
	}
	available := metav1.Condition{Type: placementv1beta1.WorkConditionTypeAvailable, ObservedGeneration: work.Generation, LastTransitionTime: now,
		Status: metav1.ConditionTrue, Reason: placementv1beta1.WorkAllManifestsAvailableReason, Message: "all manifests are available"}
	switch {
	case notAvailable > 0:
		available.Status, available.Reason = metav1.ConditionFalse, placementv1beta1.WorkNotAllManifestsAvailableReason
		available.Message = fmt.Sprintf("%d of %d manifests are not available yet", notAvailable, len(ms))
	case untrackable > 0:
		available.Reason = placementv1beta1.WorkNotTrackableReason
		available.Message = fmt.Sprintf("The availability of work object %s is not trackable", work.Name)
	}
	meta.SetStatusCondition(&status.Conditions, available)
	return status
}
