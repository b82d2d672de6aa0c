// Package tainttoleration keeps placements off clusters with NoSchedule taints
// they do not tolerate.
package tainttoleration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "TaintToleration"

// Plugin filters clusters with an untolerated NoSchedule taint. Taints only
// affect scheduling: a cluster tainted after it was picked keeps its binding.
type Plugin struct{}

var (
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// PreFilter skips PickFixed placements: naming a cluster overrides its taints.
func (Plugin) PreFilter(_ context.Context, _ *framework.CycleState, policy *placementv1beta1.PlacementPolicy) *framework.Status {
	if policy.PlacementType == placementv1beta1.PickFixedPlacementType {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Filter rejects the cluster on its first NoSchedule taint that no toleration matches.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, policy *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	for _, taint := range cluster.Spec.Taints {
		if taint.Effect == corev1.TaintEffectNoSchedule && !tolerated(taint, policy.Tolerations) {
			return framework.Unschedulable(fmt.Sprintf("taint %+v cannot be tolerated", taint))
		}
	}
	return nil
}

func tolerated(taint clusterv1beta1.Taint, tolerations []placementv1beta1.Toleration) bool {
	for i := range tolerations {
		if tolerates(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// tolerates follows Kubernetes: an empty effect matches every effect, an
// empty key with Exists matches every taint, Equal (the default) compares
// values.
func tolerates(t *placementv1beta1.Toleration, taint clusterv1beta1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return t.Key != "" && t.Value == taint.Value
	}
	return false
}
