package clusteraffinity

import (
	"context"
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// The worked examples of the property-based scheduling guide.
func TestFractionGuideExamples(t *testing.T) {
	tests := []struct {
		name        string
		values      [3]float64
		order       placementv1beta1.PropertySortOrder
		wantPercent [3]float64
	}{
		{"descending available CPU", [3]float64{100, 20, 10}, placementv1beta1.Descending, [3]float64{100, 11.11, 0}},
		{"ascending per-CPU-core cost", [3]float64{1, 0.2, 0.1}, placementv1beta1.Ascending, [3]float64{0, 88.89, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range tt.values {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			for i, v := range tt.values {
				got := math.Round(Fraction(v, lo, hi, tt.order)*10000) / 100
				if got != tt.wantPercent[i] {
					t.Errorf("value %v: %v%%, want %v%%", v, got, tt.wantPercent[i])
				}
			}
		})
	}
	if Fraction(7, 7, 7, placementv1beta1.Ascending) != 1 || Fraction(7, 7, 7, placementv1beta1.Descending) != 1 {
		t.Errorf("equal values must earn the full weight")
	}
}

func TestParseProperty(t *testing.T) {
	tests := []struct {
		name     string
		want     property
		wantFail bool
	}{
		{name: "kubernetes-fleet.io/node-count", want: property{name: "kubernetes-fleet.io/node-count"}},
		{name: "resources.kubernetes-fleet.io/total-cpu", want: property{name: "resources.kubernetes-fleet.io/total-cpu", capacity: totalCapacity, resource: "cpu"}},
		{name: "resources.kubernetes-fleet.io/allocatable-memory", want: property{name: "resources.kubernetes-fleet.io/allocatable-memory", capacity: allocatableCapacity, resource: "memory"}},
		{name: "resources.kubernetes-fleet.io/available-nvidia.com/gpu", want: property{name: "resources.kubernetes-fleet.io/available-nvidia.com/gpu", capacity: availableCapacity, resource: "nvidia.com/gpu"}},
		{name: "resources.kubernetes-fleet.io/spare-cpu", wantFail: true},
		{name: "resources.kubernetes-fleet.io/total", wantFail: true},
		{name: "resources.kubernetes-fleet.io/total-", wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProperty(tt.name)
			if (err != nil) != tt.wantFail || !tt.wantFail && got != tt.want {
				t.Errorf("parseProperty = %+v, %v", got, err)
			}
		})
	}
}

func testCluster() *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"region": "east", "env": "prod"}},
		Status: clusterv1beta1.MemberClusterStatus{
			Properties: map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
				clusterv1beta1.NodeCountProperty:  {Value: "5"},
				clusterv1beta1.K8sVersionProperty: {Value: "v1.32.3"},
			},
			ResourceUsage: clusterv1beta1.ResourceUsage{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("15")},
				Available:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")},
			},
		},
	}
}

func TestRequirementMatches(t *testing.T) {
	tests := []struct {
		name  string
		op    placementv1beta1.PropertySelectorOperator
		value string
		want  bool
	}{
		{"kubernetes-fleet.io/node-count", placementv1beta1.PropertySelectorGreaterThanOrEqualTo, "5", true},
		{"kubernetes-fleet.io/node-count", placementv1beta1.PropertySelectorGreaterThan, "5", false},
		{"kubernetes-fleet.io/node-count", placementv1beta1.PropertySelectorEqualTo, "5", true},
		{"kubernetes-fleet.io/node-count", placementv1beta1.PropertySelectorNotEqualTo, "5", false},
		{"kubernetes-fleet.io/node-count", placementv1beta1.PropertySelectorLessThan, "6", true},
		{"kubernetes-fleet.io/node-count", placementv1beta1.PropertySelectorLessThanOrEqualTo, "4", false},
		{"resources.kubernetes-fleet.io/total-cpu", placementv1beta1.PropertySelectorEqualTo, "16000m", true},
		{"resources.kubernetes-fleet.io/total-memory", placementv1beta1.PropertySelectorGreaterThan, "60Gi", true},
		{"resources.kubernetes-fleet.io/allocatable-cpu", placementv1beta1.PropertySelectorLessThan, "16", true},
		{"resources.kubernetes-fleet.io/available-cpu", placementv1beta1.PropertySelectorGreaterThan, "2", true},
		{"resources.kubernetes-fleet.io/available-memory", placementv1beta1.PropertySelectorGreaterThan, "0", false}, // missing
		{"kubernetes.azure.com/per-cpu-core-cost", placementv1beta1.PropertySelectorLessThan, "1", false},            // missing
		{"k8s.io/k8s-version", placementv1beta1.PropertySelectorNotEqualTo, "1", false},                              // not a quantity
	}
	mc := testCluster()
	for _, tt := range tests {
		t.Run(tt.name+" "+string(tt.op)+" "+tt.value, func(t *testing.T) {
			r, err := parseRequirement(placementv1beta1.PropertySelectorRequirement{Name: tt.name, Operator: tt.op, Values: []string{tt.value}})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.matches(mc); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRequirementErrors(t *testing.T) {
	for name, r := range map[string]placementv1beta1.PropertySelectorRequirement{
		"no value":         {Name: "kubernetes-fleet.io/node-count", Operator: placementv1beta1.PropertySelectorEqualTo},
		"two values":       {Name: "kubernetes-fleet.io/node-count", Operator: placementv1beta1.PropertySelectorEqualTo, Values: []string{"1", "2"}},
		"not a quantity":   {Name: "kubernetes-fleet.io/node-count", Operator: placementv1beta1.PropertySelectorEqualTo, Values: []string{"many"}},
		"unknown operator": {Name: "kubernetes-fleet.io/node-count", Operator: "In", Values: []string{"1"}},
		"bad resource":     {Name: "resources.kubernetes-fleet.io/used-cpu", Operator: placementv1beta1.PropertySelectorEqualTo, Values: []string{"1"}},
	} {
		if _, err := parseRequirement(r); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func policyWith(typ placementv1beta1.PlacementType, required []placementv1beta1.ClusterSelectorTerm, preferred ...placementv1beta1.PreferredClusterSelector) *placementv1beta1.PlacementPolicy {
	aff := &placementv1beta1.ClusterAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred}
	if required != nil {
		aff.RequiredDuringSchedulingIgnoredDuringExecution = &placementv1beta1.ClusterSelector{ClusterSelectorTerms: required}
	}
	return &placementv1beta1.PlacementPolicy{PlacementType: typ, Affinity: &placementv1beta1.Affinity{ClusterAffinity: aff}}
}

func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func nodeCount(op placementv1beta1.PropertySelectorOperator, v string) *placementv1beta1.PropertySelector {
	return &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{
		{Name: string(clusterv1beta1.NodeCountProperty), Operator: op, Values: []string{v}},
	}}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name      string
		terms     []placementv1beta1.ClusterSelectorTerm
		wantMatch bool
	}{
		{"label term matches", []placementv1beta1.ClusterSelectorTerm{{LabelSelector: matchLabels("region", "east")}}, true},
		{"label term does not match", []placementv1beta1.ClusterSelectorTerm{{LabelSelector: matchLabels("region", "west")}}, false},
		{"terms are ORed", []placementv1beta1.ClusterSelectorTerm{{LabelSelector: matchLabels("region", "west")}, {PropertySelector: nodeCount("Ge", "5")}}, true},
		{"label and property are ANDed", []placementv1beta1.ClusterSelectorTerm{{LabelSelector: matchLabels("env", "prod"), PropertySelector: nodeCount("Gt", "5")}}, false},
		{"empty term matches all", []placementv1beta1.ClusterSelectorTerm{{}}, true},
		{"expression selector", []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "staging"}}},
		}}}, true},
	}
	mc := testCluster()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState(framework.CycleInfo{})
			policy := policyWith(placementv1beta1.PickAllPlacementType, tt.terms)
			if st := New().PreFilter(context.Background(), state, policy); st != nil {
				t.Fatalf("PreFilter = %v", st)
			}
			st := New().Filter(context.Background(), state, policy, mc)
			if tt.wantMatch != (st == nil) || !tt.wantMatch && st.Message() != "cluster does not match with any of the required cluster affinity terms" {
				t.Errorf("Filter = %v, want match %v", st, tt.wantMatch)
			}
		})
	}
}

func TestPreFilter(t *testing.T) {
	badLabels := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
	sorter := func(name string) placementv1beta1.PreferredClusterSelector {
		return placementv1beta1.PreferredClusterSelector{Weight: 1, Preference: placementv1beta1.ClusterSelectorTerm{
			PropertySorter: &placementv1beta1.PropertySorter{Name: name, SortOrder: placementv1beta1.Ascending}}}
	}
	tests := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		want   framework.StatusCode
		reason string
	}{
		{"no affinity", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType}, framework.Skip, ""},
		{"PickFixed", policyWith(placementv1beta1.PickFixedPlacementType, []placementv1beta1.ClusterSelectorTerm{{}}), framework.Skip, ""},
		{"preferred only", policyWith(placementv1beta1.PickNPlacementType, nil, sorter("kubernetes-fleet.io/node-count")), framework.Skip, ""},
		{"invalid label selector", policyWith(placementv1beta1.PickAllPlacementType, []placementv1beta1.ClusterSelectorTerm{{}, {LabelSelector: badLabels}}),
			framework.ClusterUnschedulable, "required cluster affinity term 1 is invalid"},
		{"invalid sorter in PickN", policyWith(placementv1beta1.PickNPlacementType, nil, sorter("resources.kubernetes-fleet.io/cpu")),
			framework.ClusterUnschedulable, "preferred cluster affinity term 0 is invalid"},
		{"preferred terms are not read for PickAll", policyWith(placementv1beta1.PickAllPlacementType, nil, sorter("resources.kubernetes-fleet.io/cpu")), framework.Skip, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := New().PreFilter(context.Background(), framework.NewCycleState(framework.CycleInfo{}), tt.policy)
			if st.Code() != tt.want || !strings.HasPrefix(st.Message(), tt.reason) {
				t.Errorf("PreFilter = %v, want %s %q", st, tt.want, tt.reason)
			}
		})
	}
}

func TestScore(t *testing.T) {
	mk := func(name, env, cpu string) *clusterv1beta1.MemberCluster {
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": env}}}
		if cpu != "" {
			mc.Status.ResourceUsage.Available = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
		return mc
	}
	clusters := []*clusterv1beta1.MemberCluster{mk("a", "prod", "8"), mk("b", "prod", "4"), mk("c", "dev", "2"), mk("d", "prod", ""), mk("e", "dev", "1")}
	policy := policyWith(placementv1beta1.PickNPlacementType, nil,
		placementv1beta1.PreferredClusterSelector{Weight: -10, Preference: placementv1beta1.ClusterSelectorTerm{LabelSelector: matchLabels("env", "dev")}},
		placementv1beta1.PreferredClusterSelector{Weight: 40, Preference: placementv1beta1.ClusterSelectorTerm{
			LabelSelector:  matchLabels("env", "prod"),
			PropertySorter: &placementv1beta1.PropertySorter{Name: "resources.kubernetes-fleet.io/available-cpu", SortOrder: placementv1beta1.Descending},
		}},
	)
	state := framework.NewCycleState(framework.CycleInfo{})
	ctx := context.Background()
	if st := New().PreFilter(ctx, state, policy); !st.IsSkip() {
		t.Fatalf("PreFilter = %v", st)
	}
	if st := New().PreScore(ctx, state, policy, clusters); st != nil {
		t.Fatalf("PreScore = %v", st)
	}
	// The sorter's range is 4..8 (prod clusters with the property).
	want := map[string]int32{"a": 40, "b": 0, "c": -10, "d": 0, "e": -10}
	for _, mc := range clusters {
		got, st := New().Score(ctx, state, policy, mc)
		if st != nil || got.AffinityScore != want[mc.Name] || got.TopologySpreadScore != 0 {
			t.Errorf("Score(%s) = %+v, %v; want affinity %d", mc.Name, got, st, want[mc.Name])
		}
	}
	if st := New().PreScore(ctx, framework.NewCycleState(framework.CycleInfo{}), policy, clusters); !st.IsSkip() {
		t.Errorf("PreScore without PreFilter state = %v, want Skip", st)
	}
}
