package tenancy

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// UsagePublisher writes each team's usage and limits onto its workspace's
// LogicalCluster (tenancyv1alpha1.UsageAnnotation), where the team and
// `kubectl fleet team usage` read them. It writes a team's only when they
// changed, at most once an Interval.
type UsagePublisher struct {
	Rules    AdmissionRules
	Interval time.Duration

	published map[logicalcluster.Name]string
}

// Start publishes until ctx ends.
func (p *UsagePublisher) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("team-usage")
	p.published = map[logicalcluster.Name]string{}
	ticker := time.NewTicker(p.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		p.publishAll(ctx, logger)
	}
}

func (p *UsagePublisher) publishAll(ctx context.Context, logger klog.Logger) {
	seen := map[logicalcluster.Name]bool{}
	for _, cluster := range p.Rules.Meter.Clusters() {
		if strings.HasPrefix(cluster.String(), "system:") {
			continue
		}
		seen[cluster] = true
		if err := p.publish(ctx, cluster); err != nil && ctx.Err() == nil {
			logger.V(2).Info("publishing a team's usage", "cluster", cluster, "err", err)
		}
	}
	for cluster := range p.published {
		if !seen[cluster] {
			delete(p.published, cluster)
		}
	}
}

// publish writes the usage of the cluster's team when the cluster is a
// team workspace and what it shows changed.
func (p *UsagePublisher) publish(ctx context.Context, cluster logicalcluster.Name) error {
	team, err := p.Rules.TeamOf(ctx, cluster)
	if err != nil || team == nil {
		return err
	}
	value, err := json.Marshal(shown(team))
	if err != nil || p.published[cluster] == string(value) {
		return err
	}
	ws, err := p.Rules.Workspaces.For(cluster)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{tenancyv1alpha1.UsageAnnotation: string(value)}}})
	if err != nil {
		return err
	}
	lc := &corev1alpha1.LogicalCluster{}
	lc.Name = corev1alpha1.LogicalClusterName
	if err := ws.Client.Patch(ctx, lc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	p.published[cluster] = string(value)
	return nil
}

// shown is what the annotation says of the team. Bytes are rounded up to
// KiB: writing the annotation changes the bytes the workspace stores, and
// exact bytes would have it written again each time.
func shown(t *Team) tenancyv1alpha1.TeamUsage {
	const kib = 1 << 10
	return tenancyv1alpha1.TeamUsage{
		Team:   t.Path.String(),
		Grants: t.Grants,
		Used: tenancyv1alpha1.TeamCounts{Objects: t.Used.Objects, StorageBytes: (t.Used.Bytes + kib - 1) / kib * kib,
			Placements: t.Used.Placements, Overrides: t.Used.Overrides},
		Limits: tenancyv1alpha1.TeamCounts{Objects: t.Limits.Objects, StorageBytes: t.Limits.Bytes, Placements: t.Limits.Placements,
			Overrides: t.Limits.Overrides, SnapshotsKept: t.Limits.SnapshotsKept},
	}
}
