package workapplier

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/syncer/availability"
	"github.com/fleetplane/fleetplane/syncer/diff"
	"github.com/fleetplane/fleetplane/syncer/workload"
)

// notApplied is the availability of a manifest that was not applied.
var notApplied = availabilityOutcome{status: string(metav1.ConditionUnknown), reason: placementv1beta1.AvailabilityResultSkipped, message: "the manifest has not been applied"}

// assessAvailability checks an applied manifest's live object.
func assessAvailability(m *manifest) {
	if !m.applied.ok || m.live == nil {
		m.avail = notApplied
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

// liveGeneration is the generation of the member's object the manifest's
// conditions describe, as KubeFleet reports it: 0 when there is none, or
// when its kind keeps no generation (a ConfigMap).
func (m *manifest) liveGeneration() int64 {
	if m.live == nil {
		return 0
	}
	return m.live.GetGeneration()
}

// buildStatus derives the Work status from the manifests' outcomes, keeping
// the transition times of conditions, and the first-observed times of drifts
// and diffs, that did not change.
func buildStatus(work *placementv1beta1.Work, ms []*manifest, now metav1.Time) placementv1beta1.WorkStatus {
	previous := map[int]placementv1beta1.ManifestCondition{}
	for _, mc := range work.Status.ManifestConditions {
		previous[mc.Identifier.Ordinal] = mc
	}
	status := placementv1beta1.WorkStatus{Conditions: append([]metav1.Condition(nil), work.Status.Conditions...)}
	if strategyOf(work).Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		return diffStatus(work, status, ms, previous, now)
	}
	meta.RemoveStatusCondition(&status.Conditions, placementv1beta1.WorkConditionTypeDiffReported)
	var failed, notAvailable, untrackable int
	for _, m := range ms {
		prev := previous[m.id.Ordinal]
		mc := placementv1beta1.ManifestCondition{Identifier: m.id, Conditions: append([]metav1.Condition(nil), prev.Conditions...)}
		meta.RemoveStatusCondition(&mc.Conditions, placementv1beta1.WorkConditionTypeDiffReported)
		applied := metav1.Condition{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionTrue,
			Reason: m.applied.reason, Message: m.applied.message, ObservedGeneration: m.liveGeneration(), LastTransitionTime: now}
		if !m.applied.ok {
			applied.Status = metav1.ConditionFalse
			failed++
		}
		meta.SetStatusCondition(&mc.Conditions, applied)
		meta.SetStatusCondition(&mc.Conditions, metav1.Condition{Type: placementv1beta1.WorkConditionTypeAvailable, Status: metav1.ConditionStatus(m.avail.status),
			Reason: m.avail.reason, Message: m.avail.message, ObservedGeneration: m.liveGeneration(), LastTransitionTime: now})
		switch {
		case m.avail.reason == placementv1beta1.AvailabilityResultNotTrackable:
			untrackable++
		case m.avail.status != string(metav1.ConditionTrue):
			notAvailable++
		}
		if len(m.drifts) > 0 {
			mc.DriftDetails = driftDetails(prev.DriftDetails, m, now)
		}
		reportWorkload(&mc, prev, m, mirrors(work), now)
		status.ManifestConditions = append(status.ManifestConditions, mc)
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

// diffStatus is the status of a ReportDiff Work: a DiffReported condition
// per manifest and for the Work, with the differences found; nothing was
// applied.
func diffStatus(work *placementv1beta1.Work, status placementv1beta1.WorkStatus, ms []*manifest, previous map[int]placementv1beta1.ManifestCondition, now metav1.Time) placementv1beta1.WorkStatus {
	meta.RemoveStatusCondition(&status.Conditions, placementv1beta1.WorkConditionTypeApplied)
	meta.RemoveStatusCondition(&status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
	failed := 0
	for _, m := range ms {
		prev := previous[m.id.Ordinal]
		var conds []metav1.Condition
		if c := meta.FindStatusCondition(prev.Conditions, placementv1beta1.WorkConditionTypeDiffReported); c != nil {
			conds = []metav1.Condition{*c}
		}
		c := metav1.Condition{Type: placementv1beta1.WorkConditionTypeDiffReported, Status: metav1.ConditionTrue, ObservedGeneration: m.liveGeneration(), LastTransitionTime: now,
			Reason: placementv1beta1.DiffResultNoDiffFound, Message: "the member cluster's object matches the hub's"}
		mc := placementv1beta1.ManifestCondition{Identifier: m.id}
		switch {
		case !m.diffReported:
			failed++
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, m.applied.reason, m.applied.message
			if c.Reason == "" {
				c.Reason = placementv1beta1.DiffResultFailedToReportDiff
			}
		case len(m.diffs) > 0:
			c.Reason, c.Message = placementv1beta1.DiffResultFoundDiff, fmt.Sprintf("the member cluster's object differs from the hub's at %s", paths(m.diffs))
			if m.live == nil {
				c.Message = "the object does not exist on the member cluster: the whole object differs from the hub's"
			}
			mc.DiffDetails = diffDetails(prev.DiffDetails, m, now)
		}
		meta.SetStatusCondition(&conds, c)
		mc.Conditions = conds
		status.ManifestConditions = append(status.ManifestConditions, mc)
	}
	c := metav1.Condition{Type: placementv1beta1.WorkConditionTypeDiffReported, Status: metav1.ConditionTrue, ObservedGeneration: work.Generation, LastTransitionTime: now,
		Reason: placementv1beta1.WorkAllManifestsDiffReportedReason, Message: "the differences of all manifests have been reported"}
	if failed > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, placementv1beta1.WorkNotAllManifestsDiffReportedReason
		c.Message = fmt.Sprintf("%d of %d manifests could not be compared; see manifestConditions", failed, len(ms))
	}
	meta.SetStatusCondition(&status.Conditions, c)
	return status
}

// driftDetails reports a manifest's drifts; the times move only when the
// drifts change, so that an unchanged drift is not rewritten on every pass.
func driftDetails(prev *placementv1beta1.DriftDetails, m *manifest, now metav1.Time) *placementv1beta1.DriftDetails {
	d := &placementv1beta1.DriftDetails{ObservationTime: now, FirstDriftedObservedTime: now, ObservedDrifts: patchDetails(m.drifts)}
	if m.live != nil {
		d.ObservedInMemberClusterGeneration = m.live.GetGeneration()
	}
	if prev != nil {
		d.FirstDriftedObservedTime = prev.FirstDriftedObservedTime
		if equality.Semantic.DeepEqual(prev.ObservedDrifts, d.ObservedDrifts) && prev.ObservedInMemberClusterGeneration == d.ObservedInMemberClusterGeneration {
			d.ObservationTime = prev.ObservationTime
		}
	}
	return d
}

// diffDetails is driftDetails for ReportDiff; the generation is unset when
// the object does not exist on the member.
func diffDetails(prev *placementv1beta1.DiffDetails, m *manifest, now metav1.Time) *placementv1beta1.DiffDetails {
	d := &placementv1beta1.DiffDetails{ObservationTime: now, FirstDiffedObservedTime: now, ObservedDiffs: patchDetails(m.diffs)}
	if m.live != nil {
		d.ObservedInMemberClusterGeneration = ptr.To(m.live.GetGeneration())
	}
	if prev != nil {
		d.FirstDiffedObservedTime = prev.FirstDiffedObservedTime
		if equality.Semantic.DeepEqual(prev.ObservedDiffs, d.ObservedDiffs) && equality.Semantic.DeepEqual(prev.ObservedInMemberClusterGeneration, d.ObservedInMemberClusterGeneration) {
			d.ObservationTime = prev.ObservationTime
		}
	}
	return d
}

// mirrors tells whether the Work's placement mirrors member statuses back
// (to either destination: the hub copies them on to the original objects
// from here).
func mirrors(work *placementv1beta1.Work) bool {
	return work.Spec.ReportBackStrategy.MirrorDestination() != ""
}

// reportWorkload adds to an applied manifest's condition what its member
// object says about whether it serves and, when mirror is set, the
// object's whole status (with the time it was first seen as it is, so an
// unchanged status is not rewritten). A status too large to mirror is left
// out, and a StatusBackReported condition says so.
func reportWorkload(mc *placementv1beta1.ManifestCondition, prev placementv1beta1.ManifestCondition, m *manifest, mirror bool, now metav1.Time) {
	if m.live == nil || !m.applied.ok {
		meta.RemoveStatusCondition(&mc.Conditions, placementv1beta1.WorkloadReportStatusBackReportedConditionType)
		return
	}
	mc.Workload = workload.State(m.live)
	mc.Warnings = m.warnings
	var raw []byte
	var tooLarge bool
	var err error
	if mirror {
		raw, tooLarge, err = workload.Status(m.live)
	}
	if !tooLarge && err == nil {
		meta.RemoveStatusCondition(&mc.Conditions, placementv1beta1.WorkloadReportStatusBackReportedConditionType)
	}
	switch {
	case err != nil || tooLarge:
		msg := fmt.Sprintf("the object's status is larger than %d bytes and is not mirrored to the hub", placementv1beta1.MaxBackReportedStatusBytes)
		if err != nil {
			msg = fmt.Sprintf("the object's status cannot be read: %v", err)
		}
		meta.SetStatusCondition(&mc.Conditions, metav1.Condition{Type: placementv1beta1.WorkloadReportStatusBackReportedConditionType, Status: metav1.ConditionFalse,
			Reason: placementv1beta1.StatusBackReportTooLargeReason, Message: msg, ObservedGeneration: m.liveGeneration(), LastTransitionTime: now})
	case raw != nil:
		mc.BackReportedStatus = &placementv1beta1.BackReportedStatus{ObservedStatus: runtime.RawExtension{Raw: raw}, ObservationTime: now}
		if p := prev.BackReportedStatus; p != nil && bytes.Equal(p.ObservedStatus.Raw, raw) {
			mc.BackReportedStatus.ObservationTime = p.ObservationTime
		}
	}
}

func patchDetails(ds []diff.Detail) []placementv1beta1.PatchDetail {
	out := make([]placementv1beta1.PatchDetail, len(ds))
	for i, d := range ds {
		out[i] = placementv1beta1.PatchDetail{Path: d.Path, ValueInMember: d.InMember, ValueInHub: d.InHub}
	}
	return out
}
