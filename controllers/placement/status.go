package placement

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// rolloutConditions are the conditions of the placement's apply strategy:
// with ReportDiff nothing is applied, and the rollout ends in DiffReported.
func rolloutConditions(p placementv1beta1.PlacementObj) []placementv1beta1.PlacementCondition {
	if as := p.GetPlacementSpec().Strategy.ApplyStrategy; as != nil && as.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		return placementv1beta1.ReportDiffRolloutConditions
	}
	return placementv1beta1.ApplyRolloutConditions
}

// withoutOthers removes the rollout conditions of the other apply strategy
// (the placement's strategy may have changed); typeOf names a condition at
// the level conds is at.
func withoutOthers(conds *[]metav1.Condition, kept []placementv1beta1.PlacementCondition, typeOf func(placementv1beta1.PlacementCondition) string) {
	for _, t := range [...]placementv1beta1.PlacementCondition{placementv1beta1.AvailableCondition, placementv1beta1.DiffReportedCondition} {
		if !slices.Contains(kept, t) {
			meta.RemoveStatusCondition(conds, typeOf(t))
		}
	}
}

func perClusterType(c placementv1beta1.PlacementCondition) string { return string(c.PerCluster) }

// buildStatus folds the policy snapshot's scheduling result and the
// bindings' rollout progress into the placement status.
func buildStatus(p placementv1beta1.PlacementObj, selected []placementv1beta1.ResourceIdentifier, resourceSnap placementv1beta1.ResourceSnapshotObj,
	policySnap placementv1beta1.PolicySnapshotObj, bindings []placementv1beta1.BindingObj) placementv1beta1.PlacementStatus {
	prev := p.GetPlacementStatus()
	status := placementv1beta1.PlacementStatus{
		SelectedResources:     selected,
		ObservedResourceIndex: resourceSnap.GetLabels()[placementv1beta1.ResourceIndexLabel],
		Conditions:            append([]metav1.Condition(nil), prev.Conditions...),
	}
	gen := p.GetGeneration()
	scheduled := scheduledCondition(p, policySnap)
	meta.SetStatusCondition(&status.Conditions, scheduled)

	active := activeBindings(bindings)
	status.PerClusterPlacementStatuses = perClusterStatuses(p, policySnap, resourceSnap.GetName(), active, prev)

	// The rollout conditions hold only when every picked cluster has them;
	// the first one that does not yet hold hides the ones after it. They
	// describe the clusters picked, also when the scheduler could not pick
	// as many as the policy asks for; with none picked there is nothing to
	// describe.
	stop := scheduled.Status == metav1.ConditionUnknown || countScheduled(status.PerClusterPlacementStatuses) == 0
	conditions := rolloutConditions(p)
	withoutOthers(&status.Conditions, conditions, func(c placementv1beta1.PlacementCondition) string { return c.TypeFor(p) })
	for _, t := range conditions {
		if stop {
			meta.RemoveStatusCondition(&status.Conditions, t.TypeFor(p))
			continue
		}
		c := aggregate(t, status.PerClusterPlacementStatuses, gen)
		c.Type = t.TypeFor(p)
		meta.SetStatusCondition(&status.Conditions, c)
		stop = c.Status != metav1.ConditionTrue
	}
	return status
}

// scheduledCondition reports the scheduler's result once it has scheduled
// this generation of the placement.
func scheduledCondition(p placementv1beta1.PlacementObj, policySnap placementv1beta1.PolicySnapshotObj) metav1.Condition {
	c := metav1.Condition{Type: placementv1beta1.ScheduledCondition.TypeFor(p), ObservedGeneration: p.GetGeneration()}
	st := policySnap.GetPolicySnapshotStatus()
	sc := meta.FindStatusCondition(st.Conditions, placementv1beta1.PolicySnapshotScheduled)
	snapGen, _ := strconv.ParseInt(policySnap.GetAnnotations()[placementv1beta1.CRPGenerationAnnotation], 10, 64)
	if sc == nil || st.ObservedCRPGeneration != snapGen || snapGen != p.GetGeneration() {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, placementv1beta1.ScheduledCondition.UnknownReason, "Scheduling has not completed"
		return c
	}
	c.Status, c.Reason, c.Message = sc.Status, sc.Reason, sc.Message
	if sc.Status != metav1.ConditionTrue {
		c.Message += rejections(st.ClusterDecisions)
	}
	return c
}

// maxListedRejections caps how many rejected clusters the Scheduled
// condition names; the policy snapshot lists more.
const maxListedRejections = 10

// rejections says why clusters were not picked, e.g. "; not picked:
// member-3: taint ... cannot be tolerated".
func rejections(decisions []placementv1beta1.ClusterDecision) string {
	var parts []string
	for _, d := range decisions {
		if d.Selected {
			continue
		}
		if len(parts) == maxListedRejections {
			parts = append(parts, "... (see the scheduling policy snapshot for more)")
			break
		}
		parts = append(parts, d.ClusterName+": "+d.Reason)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; not picked: " + strings.Join(parts, "; ")
}

// removing lists the clusters whose bindings are being removed: their
// Works stay until the member has deleted what they placed.
func removing(bindings []placementv1beta1.BindingObj) []string {
	var clusters []string
	for _, b := range bindings {
		if b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled || !b.GetDeletionTimestamp().IsZero() {
			clusters = append(clusters, b.GetBindingSpec().TargetCluster)
		}
	}
	sort.Strings(clusters)
	return clusters
}

// activeBindings are the bindings of the current scheduling decision.
func activeBindings(bindings []placementv1beta1.BindingObj) []placementv1beta1.BindingObj {
	var out []placementv1beta1.BindingObj
	for _, b := range bindings {
		spec := b.GetBindingSpec()
		if spec.State == placementv1beta1.BindingStateUnscheduled || !b.GetDeletionTimestamp().IsZero() {
			continue
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetBindingSpec().TargetCluster < out[j].GetBindingSpec().TargetCluster
	})
	return out
}

// perClusterStatuses lists one entry per scheduled cluster and, for PickN and
// PickFixed, an empty entry per slot the scheduler could not fill.
func perClusterStatuses(p placementv1beta1.PlacementObj, policySnap placementv1beta1.PolicySnapshotObj, latest string, bindings []placementv1beta1.BindingObj,
	prev *placementv1beta1.PlacementStatus) []placementv1beta1.PerClusterPlacementStatus {
	previous := map[string][]metav1.Condition{}
	for _, s := range prev.PerClusterPlacementStatuses {
		previous[s.ClusterName] = s.Conditions
	}
	gen := p.GetGeneration()
	out := make([]placementv1beta1.PerClusterPlacementStatus, 0, len(bindings))
	for _, b := range bindings {
		spec, st := b.GetBindingSpec(), b.GetBindingStatus()
		s := placementv1beta1.PerClusterPlacementStatus{
			ClusterName:                        spec.TargetCluster,
			ApplicableClusterResourceOverrides: spec.ClusterResourceOverrideSnapshots,
			ApplicableResourceOverrides:        spec.ResourceOverrideSnapshots,
			FailedPlacements:                   st.FailedPlacements,
			DriftedPlacements:                  st.DriftedPlacements,
			DiffedPlacements:                   st.DiffedPlacements,
			Conditions:                         append([]metav1.Condition(nil), previous[spec.TargetCluster]...),
		}
		if spec.ResourceSnapshotName != "" {
			s.ObservedResourceIndex = placementv1beta1.ResourceSnapshotIndexOf(p.GetName(), spec.ResourceSnapshotName)
		}
		d := spec.ClusterDecision
		score := placementv1beta1.ClusterScore{}
		if d.ClusterScore != nil {
			score = *d.ClusterScore
		}
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{
			Type: string(placementv1beta1.PerClusterScheduledConditionType), Status: metav1.ConditionTrue, ObservedGeneration: gen,
			Reason:  placementv1beta1.ScheduledReason,
			Message: fmt.Sprintf("Successfully scheduled resources for placement in %q (affinity score: %d, topology spread score: %d): %s", spec.TargetCluster, deref(score.AffinityScore), deref(score.TopologySpreadScore), d.Reason),
		})
		stop := false
		conditions := rolloutConditions(p)
		withoutOthers(&s.Conditions, conditions, perClusterType)
		for _, cond := range conditions {
			t := string(cond.PerCluster)
			c := meta.FindStatusCondition(st.Conditions, t)
			if cond == placementv1beta1.RolloutStartedCondition && spec.ResourceSnapshotName != "" && spec.ResourceSnapshotName != latest {
				// The binding's conditions describe older resources.
				c = notRolledOut(p, b, placementv1beta1.ResourceSnapshotIndexOf(p.GetName(), latest), s.ObservedResourceIndex)
			}
			if c == nil && cond == placementv1beta1.RolloutStartedCondition && spec.State == placementv1beta1.BindingStateScheduled {
				// Nothing decided to roll out to this cluster yet: with an
				// External strategy, it waits for an update run.
				c = &metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: placementv1beta1.RolloutStartedUnknownReason,
					Message: "In the process of deciding whether to roll out the latest resources or not", ObservedGeneration: b.GetGeneration()}
			}
			if stop || c == nil || c.ObservedGeneration != b.GetGeneration() {
				meta.RemoveStatusCondition(&s.Conditions, t)
				stop = true
				continue
			}
			copied := *c
			copied.ObservedGeneration = gen
			meta.SetStatusCondition(&s.Conditions, copied)
			stop = c.Status != metav1.ConditionTrue
		}
		out = append(out, s)
	}
	for i := len(out); i < wantedClusters(policySnap); i++ {
		out = append(out, placementv1beta1.PerClusterPlacementStatus{Conditions: []metav1.Condition{{
			Type: string(placementv1beta1.PerClusterScheduledConditionType), Status: metav1.ConditionFalse, ObservedGeneration: gen,
			Reason: placementv1beta1.ScheduleFailedReason, LastTransitionTime: metav1.Now(),
			Message: "No cluster is available for this slot of the scheduling policy; see the placement's Scheduled condition",
		}}})
	}
	return out
}

// notRolledOut is the RolloutStarted condition of a cluster that does not
// run the latest resource snapshot yet: as in KubeFleet, False while a
// rolling update holds it back, Unknown while an update run decides.
func notRolledOut(p placementv1beta1.PlacementObj, b placementv1beta1.BindingObj, latest, current string) *metav1.Condition {
	c := &metav1.Condition{Type: string(placementv1beta1.PerClusterRolloutStartedConditionType), ObservedGeneration: b.GetGeneration(),
		Status: metav1.ConditionFalse, Reason: placementv1beta1.RolloutNotStartedYetReason,
		Message: fmt.Sprintf("The latest resources (snapshot index %s) are not rolled out to this cluster yet, it runs index %s: the rolling update strategy holds them back until other clusters are available", latest, current)}
	if p.GetPlacementSpec().Strategy.Type == placementv1beta1.ExternalRolloutStrategyType {
		c.Status, c.Reason = metav1.ConditionUnknown, placementv1beta1.RolloutStartedUnknownReason
		c.Message = fmt.Sprintf("The latest resources (snapshot index %s) are not rolled out to this cluster yet, it runs index %s: rollouts are controlled by staged update runs", latest, current)
	}
	return c
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// wantedClusters is the number of slots of PickN and PickFixed policies.
func wantedClusters(policySnap placementv1beta1.PolicySnapshotObj) int {
	n, err := strconv.Atoi(policySnap.GetAnnotations()[placementv1beta1.NumberOfClustersAnnotation])
	if err != nil {
		return 0
	}
	return n
}

// aggregate turns one per-cluster condition of all clusters into the
// placement-level condition.
func aggregate(cond placementv1beta1.PlacementCondition, clusters []placementv1beta1.PerClusterPlacementStatus, gen int64) metav1.Condition {
	t := string(cond.PerCluster)
	var unknown, failed int
	for _, s := range clusters {
		if s.ClusterName == "" {
			continue
		}
		c := meta.FindStatusCondition(s.Conditions, t)
		switch {
		case c == nil || c.Status == metav1.ConditionUnknown:
			unknown++
		case c.Status == metav1.ConditionFalse:
			failed++
		}
	}
	c := metav1.Condition{ObservedGeneration: gen}
	switch {
	case failed > 0:
		c.Status, c.Reason = metav1.ConditionFalse, cond.FalseReason
		c.Message = fmt.Sprintf("%s is False on %d cluster(s); see placementStatuses", t, failed)
	case unknown > 0:
		c.Status, c.Reason = metav1.ConditionUnknown, cond.UnknownReason
		c.Message = fmt.Sprintf("%s is pending on %d cluster(s)", t, unknown)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, cond.TrueReason
		c.Message = fmt.Sprintf("%s on all %d scheduled cluster(s)", t, countScheduled(clusters))
		if cond == placementv1beta1.OverriddenCondition && anyOverridden(clusters) {
			c.Reason = placementv1beta1.OverriddenSucceededReason
		}
	}
	return c
}

// anyOverridden tells whether overrides were applied on some cluster.
func anyOverridden(clusters []placementv1beta1.PerClusterPlacementStatus) bool {
	for _, s := range clusters {
		c := meta.FindStatusCondition(s.Conditions, string(placementv1beta1.PerClusterOverriddenConditionType))
		if c != nil && c.Reason == placementv1beta1.OverriddenSucceededReason {
			return true
		}
	}
	return false
}

func countScheduled(clusters []placementv1beta1.PerClusterPlacementStatus) int {
	n := 0
	for _, s := range clusters {
		if s.ClusterName != "" {
			n++
		}
	}
	return n
}

// invalidSelectorsStatus reports selectors that cannot be resolved.
func invalidSelectorsStatus(p placementv1beta1.PlacementObj, err error) placementv1beta1.PlacementStatus {
	status := *p.GetPlacementStatus().DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: placementv1beta1.ScheduledCondition.TypeFor(p), Status: metav1.ConditionFalse,
		ObservedGeneration: p.GetGeneration(), Reason: placementv1beta1.InvalidResourceSelectorsReason, Message: err.Error(),
	})
	return status
}

// writeStatus updates the status when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, status placementv1beta1.PlacementStatus) error {
	if equality.Semantic.DeepEqual(*p.GetPlacementStatus(), status) {
		return nil
	}
	p.SetPlacementStatus(status)
	return c.Status().Update(ctx, p)
}

// emitEvents records conditions that newly turned True, and completion.
func emitEvents(recorder record.EventRecorder, p placementv1beta1.PlacementObj, prev []metav1.Condition, next placementv1beta1.PlacementStatus) {
	for _, t := range rolloutConditions(p) {
		name := t.TypeFor(p)
		if meta.IsStatusConditionTrue(next.Conditions, name) && !meta.IsStatusConditionTrue(prev, name) {
			recorder.Event(p, corev1.EventTypeNormal, t.EventReason, meta.FindStatusCondition(next.Conditions, name).Message)
			if t == placementv1beta1.AvailableCondition {
				recorder.Event(p, corev1.EventTypeNormal, placementv1beta1.PlacementRolloutCompletedEventReason, "Resources are available in the selected clusters")
			}
		}
	}
}
