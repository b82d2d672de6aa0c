package framework_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
	"github.com/fleetplane/fleetplane/controllers/scheduler/profile"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const snapshot = "crp-1"

type clusterOpt func(*clusterv1beta1.MemberCluster)

// newCluster returns a joined, healthy cluster with a fresh heartbeat.
func newCluster(name string, opts ...clusterOpt) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: clusterv1beta1.MemberClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1beta1.ConditionTypeMemberClusterHealthy, Status: metav1.ConditionTrue}},
			AgentStatus: []clusterv1beta1.AgentStatus{{
				Type:                  clusterv1beta1.MemberAgent,
				Conditions:            []metav1.Condition{{Type: clusterv1beta1.AgentJoined, Status: metav1.ConditionTrue}},
				LastReceivedHeartbeat: metav1.NewTime(now.Add(-time.Minute)),
			}},
		},
	}
	for _, o := range opts {
		o(mc)
	}
	return mc
}

func labeled(kv ...string) clusterOpt {
	return func(mc *clusterv1beta1.MemberCluster) {
		for i := 0; i < len(kv); i += 2 {
			mc.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withProperty(name clusterv1beta1.PropertyName, value string) clusterOpt {
	return func(mc *clusterv1beta1.MemberCluster) {
		if mc.Status.Properties == nil {
			mc.Status.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{}
		}
		mc.Status.Properties[name] = clusterv1beta1.PropertyValue{Value: value}
	}
}

func withAvailableCPU(q string) clusterOpt {
	return func(mc *clusterv1beta1.MemberCluster) {
		mc.Status.ResourceUsage.Available = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
}

func tainted(key, value string) clusterOpt {
	return func(mc *clusterv1beta1.MemberCluster) {
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule})
	}
}

func withNamespaces(ns ...string) clusterOpt {
	return func(mc *clusterv1beta1.MemberCluster) {
		mc.Status.Namespaces = map[string]string{}
		for _, n := range ns {
			mc.Status.Namespaces[n] = "work-" + n
		}
	}
}

func unhealthy(mc *clusterv1beta1.MemberCluster) {
	mc.Status.Conditions[0] = metav1.Condition{
		Type: clusterv1beta1.ConditionTypeMemberClusterHealthy, Status: metav1.ConditionFalse, Reason: clusterv1beta1.ReasonMemberAgentHeartbeatLost,
	}
}

func left(mc *clusterv1beta1.MemberCluster) {
	mc.Status.AgentStatus[0].Conditions[0].Status = metav1.ConditionFalse
}

func silent(mc *clusterv1beta1.MemberCluster) {
	mc.Status.AgentStatus[0].LastReceivedHeartbeat = metav1.NewTime(now.Add(-6 * time.Minute))
}

func deleting(mc *clusterv1beta1.MemberCluster) {
	ts := metav1.NewTime(now)
	mc.DeletionTimestamp = &ts
}

func grantAll(*clusterv1beta1.MemberCluster) bool { return true }

func newInput(policy *placementv1beta1.PlacementPolicy, clusters ...*clusterv1beta1.MemberCluster) framework.Input {
	in := framework.Input{
		Placement: "root:team/crp", PolicySnapshotName: snapshot, Policy: policy,
		Clusters: clusters, Granted: grantAll, Now: now,
	}
	if policy != nil && policy.NumberOfClusters != nil {
		in.NumberOfClusters = int(*policy.NumberOfClusters)
	}
	return in
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: &n}
}

func pickAll() *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType}
}

func withRequired(p *placementv1beta1.PlacementPolicy, terms ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.PlacementPolicy {
	aff := clusterAffinity(p)
	aff.RequiredDuringSchedulingIgnoredDuringExecution = &placementv1beta1.ClusterSelector{ClusterSelectorTerms: terms}
	return p
}

func withPreferred(p *placementv1beta1.PlacementPolicy, prefs ...placementv1beta1.PreferredClusterSelector) *placementv1beta1.PlacementPolicy {
	aff := clusterAffinity(p)
	aff.PreferredDuringSchedulingIgnoredDuringExecution = prefs
	return p
}

func clusterAffinity(p *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterAffinity {
	if p.Affinity == nil {
		p.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{}}
	}
	return p.Affinity.ClusterAffinity
}

func labelTerm(kv ...string) placementv1beta1.ClusterSelectorTerm {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: m}}
}

func propertyTerm(name string, op placementv1beta1.PropertySelectorOperator, value string) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{PropertySelector: &placementv1beta1.PropertySelector{
		MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{Name: name, Operator: op, Values: []string{value}}},
	}}
}

func sorterTerm(weight int32, name string, order placementv1beta1.PropertySortOrder) placementv1beta1.PreferredClusterSelector {
	return placementv1beta1.PreferredClusterSelector{Weight: weight, Preference: placementv1beta1.ClusterSelectorTerm{
		PropertySorter: &placementv1beta1.PropertySorter{Name: name, SortOrder: order},
	}}
}

func spread(key string, maxSkew int32, when placementv1beta1.UnsatisfiableConstraintAction) placementv1beta1.TopologySpreadConstraint {
	return placementv1beta1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: &maxSkew, WhenUnsatisfiable: when}
}

func newBinding(cluster, policySnapshot string, state placementv1beta1.BindingState) framework.Binding {
	return framework.Binding{
		Name: "b-" + cluster, TargetCluster: cluster, SchedulingPolicySnapshotName: policySnapshot, State: state,
		ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: cluster, Selected: true, Reason: framework.PickedReason},
	}
}

func schedule(t *testing.T, in framework.Input) framework.Result {
	t.Helper()
	res, err := profile.NewDefaultFramework().Schedule(context.Background(), in)
	if err != nil {
		t.Fatalf("Schedule() error = %v", err)
	}
	return res
}

func selected(res framework.Result) []string {
	var names []string
	for _, d := range res.Decisions {
		if d.Selected {
			names = append(names, d.ClusterName)
		}
	}
	return names
}

func created(res framework.Result) []string {
	var names []string
	for _, d := range res.Create {
		names = append(names, d.ClusterName)
	}
	return names
}

func patched(res framework.Result) []string {
	var names []string
	for _, u := range res.Patch {
		names = append(names, u.Name)
	}
	return names
}

// reasons maps each rejected cluster to its reason.
func reasons(res framework.Result) map[string]string {
	m := map[string]string{}
	for _, d := range res.Decisions {
		if !d.Selected {
			m[d.ClusterName] = d.Reason
		}
	}
	return m
}

func decisionFor(t *testing.T, res framework.Result, cluster string) placementv1beta1.ClusterDecision {
	t.Helper()
	i := slices.IndexFunc(res.Decisions, func(d placementv1beta1.ClusterDecision) bool { return d.ClusterName == cluster })
	if i < 0 {
		t.Fatalf("no decision for cluster %s in %+v", cluster, res.Decisions)
	}
	return res.Decisions[i]
}

func scoresOf(d placementv1beta1.ClusterDecision) (affinity, topology int32) {
	if d.ClusterScore == nil || d.ClusterScore.AffinityScore == nil || d.ClusterScore.TopologySpreadScore == nil {
		return -999, -999
	}
	return *d.ClusterScore.AffinityScore, *d.ClusterScore.TopologySpreadScore
}

func equal[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
