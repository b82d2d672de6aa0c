package framework_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
	"github.com/fleetplane/fleetplane/controllers/scheduler/profile"
)

// benchFleet returns 1,000 clusters over 5 regions x 3 zones, 3 envs and 2
// tiers, with varied CPU, memory and node counts.
func benchFleet() []*clusterv1beta1.MemberCluster {
	clusters := make([]*clusterv1beta1.MemberCluster, 1000)
	for i := range clusters {
		region := fmt.Sprintf("region-%d", i%5)
		clusters[i] = newCluster(fmt.Sprintf("member-%04d", i),
			labeled("region", region, "zone", fmt.Sprintf("%s-%d", region, i%3), "env", []string{"prod", "staging", "dev"}[i%3],
				"tier", []string{"gold", "silver"}[i%2]),
			withProperty(clusterv1beta1.NodeCountProperty, fmt.Sprint(3+i%40)),
			func(mc *clusterv1beta1.MemberCluster) {
				mc.Status.ResourceUsage.Available = corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(500+(i*7919)%64000), resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(int64(1+(i*104729)%256)<<30, resource.BinarySI),
				}
			})
	}
	return clusters
}

// benchInput is a PickN 100 policy with required affinity on env, a label
// preference and a CPU sorter, spread over regions with max skew 1.
func benchInput() framework.Input {
	policy := withRequired(pickN(100), labelTerm("env", "prod"))
	withPreferred(policy,
		placementv1beta1.PreferredClusterSelector{Weight: 30, Preference: labelTerm("tier", "gold")},
		sorterTerm(50, string(clusterv1beta1.AvailableCPUCapacityProperty), placementv1beta1.Descending),
	)
	policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{spread("region", 1, placementv1beta1.DoNotSchedule)}
	return newInput(policy, benchFleet()...)
}

func BenchmarkPickN100Of1000(b *testing.B) {
	benchmarkSchedule(b, benchInput(), 100)
}

// BenchmarkPickN100Of1000SteadyState reschedules a placement that already has
// its 100 bindings.
func BenchmarkPickN100Of1000SteadyState(b *testing.B) {
	in := benchInput()
	first, err := profile.NewDefaultFramework().Schedule(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range first.Create {
		in.Bindings = append(in.Bindings, framework.Binding{
			Name: "b-" + d.ClusterName, TargetCluster: d.ClusterName, SchedulingPolicySnapshotName: snapshot,
			State: placementv1beta1.BindingStateBound, ClusterDecision: d,
		})
	}
	benchmarkSchedule(b, in, 0)
}

// benchmarkSchedule measures Schedule and reports the p99 of 200 timed runs.
func benchmarkSchedule(b *testing.B, in framework.Input, wantCreated int) {
	fw := profile.NewDefaultFramework()
	ctx := context.Background()
	run := func() {
		res, err := fw.Schedule(ctx, in)
		if err != nil || len(res.Create) != wantCreated || !res.Fulfilled {
			b.Fatalf("created %d (want %d), fulfilled %v, err %v", len(res.Create), wantCreated, res.Fulfilled, err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.StopTimer()
	durations := make([]time.Duration, 200)
	for i := range durations {
		start := time.Now()
		run()
		durations[i] = time.Since(start)
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)*99/100-1])/float64(time.Millisecond), "p99-ms")
}
