package clusteraffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// FuzzPropertySelection runs a PickN cycle whose required term is a property
// selector and whose preferred term is a property sorter over clusters that
// report arbitrary property values: it must never panic, a cluster passes
// the filter only if it reports the property, and no cluster scores more
// than the sorter's weight nor a sign opposite to it.
func FuzzPropertySelection(f *testing.F) {
	f.Add("kubernetes-fleet.io/node-count", "Gt", "2", "5", "1", "", int32(50), true)
	f.Add("resources.kubernetes-fleet.io/available-cpu", "Le", "4", "3500m", "900Ei", "1e308", int32(-30), false)
	f.Add("cost", "Eq", "0.25", "0.25", "NaN", "1e-300", int32(100), true)
	f.Add("resources.kubernetes-fleet.io/total-memory", "Ne", "1Gi", "16Gi", "64Ki", "-1", int32(1), false)
	f.Fuzz(func(t *testing.T, name, op, value, v1, v2, v3 string, weight int32, descending bool) {
		order := placementv1beta1.Ascending
		if descending {
			order = placementv1beta1.Descending
		}
		policy := &placementv1beta1.PlacementPolicy{
			PlacementType: placementv1beta1.PickNPlacementType,
			Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{
					PropertySelector: &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
						Name: name, Operator: placementv1beta1.PropertySelectorOperator(op), Values: []string{value},
					}}},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
					Weight:     weight,
					Preference: placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{Name: name, SortOrder: order}},
				}},
			}},
		}
		clusters := []*clusterv1beta1.MemberCluster{reporting(name, v1), reporting(name, v2), reporting(name, v3)}

		ctx := context.Background()
		state := framework.NewCycleState(framework.CycleInfo{})
		p := New()
		if st := p.PreFilter(ctx, state, policy); st != nil {
			if !st.IsClusterUnschedulable() {
				t.Fatalf("PreFilter = %v, want nil or Unschedulable with the parse error", st)
			}
			return
		}
		var feasible []*clusterv1beta1.MemberCluster
		for _, mc := range clusters {
			st := p.Filter(ctx, state, policy, mc)
			if st == nil {
				if _, ok := mustParse(t, name).valueOf(mc); !ok {
					t.Fatalf("cluster %s passed the filter without reporting %q", mc.Name, name)
				}
				feasible = append(feasible, mc)
			} else if !st.IsClusterUnschedulable() {
				t.Fatalf("Filter = %v, want nil or Unschedulable", st)
			}
		}
		if st := p.PreScore(ctx, state, policy, feasible); st != nil {
			t.Fatalf("PreScore = %v", st)
		}
		for _, mc := range feasible {
			score, st := p.Score(ctx, state, policy, mc)
			if st != nil {
				t.Fatalf("Score = %v", st)
			}
			if s := int64(score.AffinityScore); s*int64(weight) < 0 || abs(s) > abs(int64(weight)) {
				t.Fatalf("cluster %s scored %d for a sorter of weight %d", mc.Name, s, weight)
			}
		}
	})
}

func mustParse(t *testing.T, name string) property {
	p, err := parseProperty(name)
	if err != nil {
		t.Fatalf("parseProperty(%q) failed after PreFilter accepted it: %v", name, err)
	}
	return p
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// reporting is a cluster that reports value for the property: as a
// non-resource property verbatim, as a resource usage entry when it parses.
func reporting(name, value string) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "reports-" + value}}
	p, err := parseProperty(name)
	if err != nil || p.capacity == notAResource {
		mc.Status.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{clusterv1beta1.PropertyName(name): {Value: value}}
		return mc
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return mc
	}
	list := corev1.ResourceList{p.resource: q}
	mc.Status.ResourceUsage = clusterv1beta1.ResourceUsage{Capacity: list, Allocatable: list, Available: list}
	return mc
}
