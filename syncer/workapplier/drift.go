package workapplier

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/syncer/diff"
)

// leave decides whether an existing object this placement may manage is
// left as it is: it is up to date and has not drifted, or it drifted and
// whenToApply is IfNotDrifted (reported). Otherwise it is written, which
// reverts a drift.
func (a *applier) leave(m *manifest, live *unstructured.Unstructured) bool {
	drifts := a.drifts(live)
	switch {
	case len(drifts) == 0 && a.upToDate(live, m.hash):
		m.applied = applyOutcome{ok: true, reason: placementv1beta1.ApplyResultApplied, message: "the object is up to date"}
		return true
	case len(drifts) > 0 && a.strategy.WhenToApply == placementv1beta1.WhenToApplyTypeIfNotDrifted:
		m.drifts = diff.ForReport(live, drifts)
		m.fail(placementv1beta1.ApplyResultFoundDrifts, fmt.Sprintf("%s was changed on the member cluster at %s; whenToApply is IfNotDrifted, so the hub's version is not applied until the change is undone (or whenToApply is Always)", describe(live), paths(drifts)))
		return true
	}
	return false
}

// drifts compares an object this placement manages with what it last
// applied to it (kept in the object's last-applied annotation): a difference
// is a change made on the member. Objects written before the annotation was
// kept, or whose manifest was too big for it, show no drift.
func (a *applier) drifts(live *unstructured.Unstructured) []diff.Detail {
	if !a.owner.manages(live) {
		return nil
	}
	last := live.GetAnnotations()[placementv1beta1.LastAppliedConfigAnnotation]
	if last == "" {
		return nil
	}
	applied := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(last), &applied.Object); err != nil {
		return nil
	}
	return a.compare(applied, live)
}

func (a *applier) compare(hub, live *unstructured.Unstructured) []diff.Detail {
	return diff.Compare(hub, live, a.strategy.ComparisonOption == placementv1beta1.ComparisonOptionTypeFullComparison)
}

// reportDiff compares the manifest with the member's object and writes
// nothing: ReportDiff only reports.
func (a *applier) reportDiff(ctx context.Context, m *manifest) {
	live, err := a.reader.get(ctx, m.obj.GroupVersionKind(), client.ObjectKeyFromObject(m.obj))
	if err != nil {
		m.fail(placementv1beta1.DiffResultFailedToReportDiff, fmt.Sprintf("reading %s from the member cluster: %v", describe(m.obj), err))
		return
	}
	m.live, m.diffReported = live, true
	m.applied = applyOutcome{ok: true}
	if live == nil {
		m.diffs = []diff.Detail{{Path: "/", InHub: diff.WholeObject}}
		return
	}
	m.diffs = diff.ForReport(live, a.compare(m.obj, live))
}
