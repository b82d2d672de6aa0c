package tainttoleration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

func TestTolerates(t *testing.T) {
	taint := clusterv1beta1.Taint{Key: "gpu", Value: "a100", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name       string
		toleration placementv1beta1.Toleration
		want       bool
	}{
		{"equal, same value", placementv1beta1.Toleration{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "a100"}, true},
		{"default operator is Equal", placementv1beta1.Toleration{Key: "gpu", Value: "a100"}, true},
		{"equal, other value", placementv1beta1.Toleration{Key: "gpu", Value: "h100"}, false},
		{"equal, other key", placementv1beta1.Toleration{Key: "cpu", Value: "a100"}, false},
		{"exists", placementv1beta1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}, true},
		{"exists, other key", placementv1beta1.Toleration{Key: "cpu", Operator: corev1.TolerationOpExists}, false},
		{"empty key exists tolerates all", placementv1beta1.Toleration{Operator: corev1.TolerationOpExists}, true},
		{"empty key equal tolerates nothing", placementv1beta1.Toleration{Value: "a100"}, false},
		{"matching effect", placementv1beta1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, true},
		{"other effect", placementv1beta1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tolerates(&tt.toleration, taint); got != tt.want {
				t.Errorf("tolerates = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	gpu := clusterv1beta1.Taint{Key: "gpu", Value: "a100", Effect: corev1.TaintEffectNoSchedule}
	spot := clusterv1beta1.Taint{Key: "spot", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name        string
		taints      []clusterv1beta1.Taint
		tolerations []placementv1beta1.Toleration
		want        string
	}{
		{name: "no taints"},
		{name: "untolerated", taints: []clusterv1beta1.Taint{gpu}, want: "taint {Key:gpu Value:a100 Effect:NoSchedule} cannot be tolerated"},
		{name: "all tolerated", taints: []clusterv1beta1.Taint{gpu, spot},
			tolerations: []placementv1beta1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}, {Key: "gpu", Value: "a100"}}},
		{name: "one of two tolerated", taints: []clusterv1beta1.Taint{gpu, spot},
			tolerations: []placementv1beta1.Toleration{{Key: "gpu", Value: "a100"}}, want: "taint {Key:spot Value: Effect:NoSchedule} cannot be tolerated"},
		{name: "other effects are ignored", taints: []clusterv1beta1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}},
	}
	state := framework.NewCycleState(framework.CycleInfo{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType, Tolerations: tt.tolerations}
			mc := &clusterv1beta1.MemberCluster{Spec: clusterv1beta1.MemberClusterSpec{Taints: tt.taints}}
			st := New().Filter(context.Background(), state, policy, mc)
			if tt.want == "" && st != nil || tt.want != "" && st.Message() != tt.want {
				t.Errorf("Filter = %v, want %q", st, tt.want)
			}
		})
	}
}

func TestPreFilterSkipsPickFixed(t *testing.T) {
	state := framework.NewCycleState(framework.CycleInfo{})
	for typ, wantSkip := range map[placementv1beta1.PlacementType]bool{
		placementv1beta1.PickFixedPlacementType: true,
		placementv1beta1.PickAllPlacementType:   false,
		placementv1beta1.PickNPlacementType:     false,
	} {
		if st := New().PreFilter(context.Background(), state, &placementv1beta1.PlacementPolicy{PlacementType: typ}); st.IsSkip() != wantSkip {
			t.Errorf("PreFilter(%s) = %v, want skip %v", typ, st, wantSkip)
		}
	}
}
