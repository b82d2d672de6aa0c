package workapplier

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/syncer/diff"
)

// leave decides whether an existing object this placement may manage is
// left as it is: it is up to date and has not drifted, or it drifted and
// whenToApply is IfNotDrifted (reported). Otherwise it is written, which
// reverts a drift. Fields the member added that the manifest does not set
// (full comparison) stay through a write: they are reported as drift of an
// object that is applied, and alone they call for no write.
func (a *applier) leave(ctx context.Context, m *manifest, live *unstructured.Unstructured) bool {
	drifts := a.drifts(ctx, live)
	kept := slices.DeleteFunc(slices.Clone(drifts), func(d diff.Detail) bool { return !d.MemberOnly })
	m.drifts = diff.ForReport(live, kept)
	switch {
	case len(drifts) > 0 && a.strategy.WhenToApply == placementv1beta1.WhenToApplyTypeIfNotDrifted:
		m.drifts = diff.ForReport(live, drifts)
		m.fail(placementv1beta1.ApplyResultFoundDrifts, fmt.Sprintf("%s was changed on the member cluster at %s; whenToApply is IfNotDrifted, so the hub's version is not applied until the change is undone (or whenToApply is Always)", describe(live), paths(drifts)))
		return true
	case len(drifts) == len(kept) && a.upToDate(live, m.hash):
		m.applied = applyOutcome{ok: true, reason: placementv1beta1.ApplyResultApplied, message: "the object is up to date"}
		return true
	}
	return false
}

// drifts compares an object this placement manages with what it last
// applied to it (kept in the object's last-applied annotation): a difference
// is a change made on the member. Objects written before the annotation was
// kept, or whose manifest was too big for it, show no drift.
func (a *applier) drifts(ctx context.Context, live *unstructured.Unstructured) []diff.Detail {
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
	return a.compare(ctx, applied, live)
}

// compare returns how live differs from hub; with full comparison, fields
// only the member has count where someone set them on the member.
func (a *applier) compare(ctx context.Context, hub, live *unstructured.Unstructured) []diff.Detail {
	full := a.strategy.ComparisonOption == placementv1beta1.ComparisonOptionTypeFullComparison
	ds := diff.Compare(hub, live, full)
	if full && slices.ContainsFunc(ds, func(d diff.Detail) bool { return d.MemberOnly }) {
		ds = a.setOnTheMember(ctx, live, ds)
	}
	return ds
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
	m.diffs = diff.ForReport(live, a.compare(ctx, m.obj, live))
}
