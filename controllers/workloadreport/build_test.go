package workloadreport

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func deployment(ready, wanted int32, available metav1.ConditionStatus) placementv1beta1.ManifestCondition {
	return placementv1beta1.ManifestCondition{
		Identifier: placementv1beta1.WorkResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "web"},
		Conditions: []metav1.Condition{
			{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionTrue, Reason: "Applied"},
			{Type: placementv1beta1.WorkConditionTypeAvailable, Status: available, Reason: "NotYetAvailable"},
		},
		Workload:           &placementv1beta1.WorkloadState{Replicas: ptr.To(wanted), ReadyReplicas: ptr.To(ready)},
		BackReportedStatus: &placementv1beta1.BackReportedStatus{ObservedStatus: runtime.RawExtension{Raw: []byte(`{"status":{"readyReplicas":1}}`)}},
	}
}

func namespace() placementv1beta1.ManifestCondition {
	return placementv1beta1.ManifestCondition{
		Identifier: placementv1beta1.WorkResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "web"},
		Conditions: []metav1.Condition{
			{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionTrue, Reason: "Applied"},
			{Type: placementv1beta1.WorkConditionTypeAvailable, Status: metav1.ConditionTrue, Reason: "Available"},
		},
	}
}

func work(reported bool, destination placementv1beta1.ReportBackDestination, mcs ...placementv1beta1.ManifestCondition) placementv1beta1.Work {
	w := placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	if destination != "" {
		w.Spec.ReportBackStrategy = &placementv1beta1.ReportBackStrategy{Type: placementv1beta1.ReportBackStrategyTypeMirror, Destination: &destination}
	}
	if reported {
		w.Status.Conditions = []metav1.Condition{{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
	}
	w.Status.ManifestConditions = mcs
	return w
}

func TestBuildSumsEachObjectOverItsClusters(t *testing.T) {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 3}}
	st := build(p, []clusterWorks{
		{cluster: "c", works: []placementv1beta1.Work{work(true, "", namespace(), deployment(7, 10, metav1.ConditionFalse))}},
		{cluster: "a", works: []placementv1beta1.Work{work(true, "", namespace(), deployment(10, 10, metav1.ConditionTrue))}},
		{cluster: "b", works: []placementv1beta1.Work{work(true, "", namespace(), deployment(10, 10, metav1.ConditionTrue))}},
	}, nil)
	if st.ObjectCount != 2 || st.AvailableClusters != "2/3" || st.ReadyReplicas != "27/30" {
		t.Errorf("objects %d, available clusters %q, ready %q; want 2, 2/3, 27/30", st.ObjectCount, st.AvailableClusters, st.ReadyReplicas)
	}
	d := st.Objects[1]
	if d.Kind != "Deployment" || d.Summary != "2/3 clusters available, 27/30 replicas ready" {
		t.Fatalf("second object %s: %q", d.Kind, d.Summary)
	}
	if len(d.Clusters) != 3 || d.Clusters[0].ClusterName != "a" || d.Clusters[2].Available != metav1.ConditionFalse || d.Clusters[2].Reason != "NotYetAvailable" {
		t.Errorf("per-cluster entries: %+v", d.Clusters)
	}
	if d.Clusters[0].BackReportedStatus != nil {
		t.Errorf("a placement that does not mirror to the Work API carries the member's status")
	}
	if ns := st.Objects[0]; len(ns.Clusters) != 0 || ns.Summary != "3/3 clusters available" {
		t.Errorf("a Namespace available everywhere lists %d clusters, says %q", len(ns.Clusters), ns.Summary)
	}
	if !strings.HasPrefix(st.Summary, "Deployment web: 2/3 clusters available") {
		t.Errorf("summary %q", st.Summary)
	}
	if c := st.Conditions[0]; c.Reason != placementv1beta1.WorkloadReportAllReportedReason || c.ObservedGeneration != 3 {
		t.Errorf("Reported condition %+v", c)
	}
}

func TestBuildSaysWhichClustersHaveNotReported(t *testing.T) {
	p := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web"}}
	st := build(p, []clusterWorks{{cluster: "a", works: []placementv1beta1.Work{work(false, "")}}}, nil)
	if c := st.Conditions[0]; c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "a") || st.AvailableClusters != "0/1" {
		t.Errorf("Reported %+v, available %q", c, st.AvailableClusters)
	}
	if st.Summary != "no object reported yet" {
		t.Errorf("summary %q", st.Summary)
	}
}

func TestBuildCarriesMirroredStatusesForTheWorkAPI(t *testing.T) {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	st := build(p, []clusterWorks{{cluster: "a", works: []placementv1beta1.Work{
		work(true, placementv1beta1.ReportBackDestinationWorkAPI, deployment(1, 1, metav1.ConditionTrue))}}}, nil)
	if got := st.Objects[0].Clusters[0].BackReportedStatus; got == nil || string(got.ObservedStatus.Raw) != `{"status":{"readyReplicas":1}}` {
		t.Errorf("mirrored status: %+v", got)
	}
}

func TestBuildKeepsTheReportWithinItsBudget(t *testing.T) {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	var clusters []clusterWorks
	for i := range maxClusterEntries + 5 {
		clusters = append(clusters, clusterWorks{cluster: strings.Repeat("c", 1+i%7) + string(rune('a'+i%26)) + "-" + strings.Repeat("x", i/26),
			works: []placementv1beta1.Work{work(true, "", deployment(1, 1, metav1.ConditionTrue))}})
	}
	st := build(p, clusters, nil)
	if n := len(st.Objects[0].Clusters); n != maxClusterEntries {
		t.Errorf("%d per-cluster entries, want %d", n, maxClusterEntries)
	}
	if st.Objects[0].PlacedClusters != int32(len(clusters)) {
		t.Errorf("the counts leave out trimmed entries: %d", st.Objects[0].PlacedClusters)
	}
	if c := st.Conditions[0]; c.Reason != placementv1beta1.WorkloadReportTrimmedReason {
		t.Errorf("Reported %+v", c)
	}
}

func TestSingleCluster(t *testing.T) {
	for _, tc := range []struct {
		policy *placementv1beta1.PlacementPolicy
		ok     bool
	}{
		{nil, false},
		{&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{"a"}}, true},
		{&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{"a", "b"}}, false},
		{&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To[int32](1)}, true},
		{&placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To[int32](2)}, false},
	} {
		p := &placementv1beta1.ClusterResourcePlacement{Spec: placementv1beta1.PlacementSpec{Policy: tc.policy}}
		if why, ok := singleCluster(p); ok != tc.ok || (!ok && why == "") {
			t.Errorf("policy %+v: single cluster %v (%q), want %v", tc.policy, ok, why, tc.ok)
		}
	}
}

func TestNewWarningsAreThoseThePreviousReportDidNotHave(t *testing.T) {
	pull := placementv1beta1.MemberWarning{Reason: "Failed", Message: "Failed to pull image"}
	sched := placementv1beta1.MemberWarning{Reason: "FailedScheduling", Message: "0/1 nodes are available"}
	report := func(warnings ...placementv1beta1.MemberWarning) *placementv1beta1.WorkloadReportStatus {
		return &placementv1beta1.WorkloadReportStatus{Objects: []placementv1beta1.ObjectWorkloadReport{{
			ResourceIdentifier: placementv1beta1.ResourceIdentifier{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web"},
			Clusters:           []placementv1beta1.ClusterWorkloadState{{ClusterName: "a", Warnings: warnings}},
		}}}
	}
	got := newWarnings(report(pull), report(pull, sched))
	if len(got) != 1 || got[0].warning != sched || got[0].cluster != "a" {
		t.Errorf("new warnings: %+v", got)
	}
	if got := newWarnings(report(pull, sched), report(pull)); len(got) != 0 {
		t.Errorf("a warning gone is announced: %+v", got)
	}
}
