package board

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// fleetOf is a workspace watch over members MemberClusters and placements
// PickN(perPlacement) placements, all available but one cluster each
// that failed to apply.
func fleetOf(b *testing.B, members, placements, perPlacement int) *workspaceWatch {
	var objs []client.Object
	for i := range members {
		m := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("member-%04d", i), Labels: map[string]string{"region": "eastus"}}}
		m.Status.Conditions = []metav1.Condition{cond(clusterv1beta1.ConditionTypeMemberClusterJoined, metav1.ConditionTrue, "MemberClusterJoined", "")}
		objs = append(objs, m)
	}
	for p := range placements {
		crp := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d", p)}}
		crp.Spec.Policy = &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(int32(perPlacement))}
		for c := range perPlacement {
			st := placementv1beta1.PerClusterPlacementStatus{ClusterName: fmt.Sprintf("member-%04d", (p+c)%members),
				Conditions: []metav1.Condition{cond("Applied", metav1.ConditionTrue, "AllWorkApplied", ""), cond("Available", metav1.ConditionTrue, "AllWorkAvailable", "")}}
			if c == 0 {
				st.Conditions = []metav1.Condition{cond("Applied", metav1.ConditionFalse, "ApplyFailed", "ConfigMap app/settings: owned by another placement")}
			}
			crp.Status.PerClusterPlacementStatuses = append(crp.Status.PerClusterPlacementStatuses, st)
		}
		objs = append(objs, crp)
	}
	w := &workspaceWatch{path: logicalcluster.NewPath("root:fleet"), reader: cached(objs), visible: map[string]bool{}}
	for _, o := range []client.Object{&clusterv1beta1.MemberCluster{}, &placementv1beta1.ClusterResourcePlacement{}} {
		w.visible[typeName(o)] = true
	}
	return w
}

// cached reads objects as an informer's cache does when asked not to copy
// them: the same objects each time, filtered by nothing (the views list
// whole kinds).
type cached []client.Object

func (c cached) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return fmt.Errorf("not used by the benchmarks")
}

func (c cached) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	var items []runtime.Object
	want := fmt.Sprintf("%T", list)
	for _, o := range c {
		if fmt.Sprintf("%TList", o) == want {
			items = append(items, o)
		}
	}
	switch l := list.(type) {
	case *clusterv1beta1.MemberClusterList:
		for _, o := range items {
			l.Items = append(l.Items, *o.(*clusterv1beta1.MemberCluster))
		}
	case *placementv1beta1.ClusterResourcePlacementList:
		for _, o := range items {
			l.Items = append(l.Items, *o.(*placementv1beta1.ClusterResourcePlacement))
		}
	case *tenancyv1alpha1.ClusterGrantList:
		for _, o := range items {
			l.Items = append(l.Items, *o.(*tenancyv1alpha1.ClusterGrant))
		}
	}
	return nil
}

// BenchmarkPlacementsView is the grid of 1,000 placements of 100 clusters
// over 1,000 members, as the board computes and sends it after a change.
func BenchmarkPlacementsView(b *testing.B) {
	w := fleetOf(b, 1000, 1000, 100)
	var size int
	b.ResetTimer()
	for b.Loop() {
		v, err := w.placementsView(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/view")
}

// BenchmarkClustersView is the fleet map of 1,000 members.
func BenchmarkClustersView(b *testing.B) {
	w := fleetOf(b, 1000, 0, 0)
	var size int
	for b.Loop() {
		v, err := w.clustersView(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		data, _ := json.Marshal(v)
		size = len(data)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/view")
}

func TestTheFleetMapMarksCordonedAndLeavingClusters(t *testing.T) {
	now := metav1.Now()
	joined := []metav1.Condition{cond(clusterv1beta1.ConditionTypeMemberClusterJoined, metav1.ConditionTrue, "MemberClusterJoined", "")}
	cordoned := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: clusterv1beta1.MemberClusterSpec{Taints: []clusterv1beta1.Taint{{Key: clusterv1beta1.CordonTaintKey, Value: clusterv1beta1.CordonTaintValue, Effect: "NoSchedule"}}}}
	cordoned.Status.Conditions = joined
	leaving := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "b", DeletionTimestamp: &now, Finalizers: []string{"x"}}}
	leaving.Status.Conditions = joined
	unhealthy := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	unhealthy.Status.Conditions = joined
	unhealthy.Status.AgentStatus = []clusterv1beta1.AgentStatus{{Type: "MemberAgent",
		Conditions: []metav1.Condition{cond(clusterv1beta1.AgentHealthy, metav1.ConditionFalse, "HeartbeatMissed", "no heartbeat for 3m")}}}
	grant := &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "canary"}, Status: tenancyv1alpha1.ClusterGrantStatus{Clusters: []string{"a", "c"}}}
	w := &workspaceWatch{reader: cached{cordoned, leaving, unhealthy, grant}, visible: map[string]bool{}}
	for _, o := range []client.Object{&clusterv1beta1.MemberCluster{}, &tenancyv1alpha1.ClusterGrant{}} {
		w.visible[typeName(o)] = true
	}
	v, err := w.clustersView(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v.Source != "MemberClusters" || len(v.Clusters) != 3 {
		t.Fatalf("view = %+v", v)
	}
	a, b, c := v.Clusters[0], v.Clusters[1], v.Clusters[2]
	if !a.Cordoned || a.Leaving || a.Health != "healthy" || len(a.Grants) != 1 || a.Taints[0] != "cordon-key=cordon-value:NoSchedule" {
		t.Errorf("cordoned cluster = %+v", a)
	}
	if !b.Leaving || b.Cordoned || len(b.Grants) != 0 {
		t.Errorf("leaving cluster = %+v", b)
	}
	if c.Health != "unhealthy" || c.Message != "HeartbeatMissed: no heartbeat for 3m" || len(c.Grants) != 1 {
		t.Errorf("unhealthy cluster = %+v", c)
	}
}
