package status

import (
	"bytes"
	"regexp"
	"testing"

	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestWorkloadTableSumsThenListsTheClustersThatSayMore(t *testing.T) {
	var out bytes.Buffer
	err := workloadTable(&out, []placementv1beta1.ObjectWorkloadReport{{
		ResourceIdentifier: placementv1beta1.ResourceIdentifier{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web"},
		PlacedClusters:     2, AvailableClusters: 1, Replicas: ptr.To[int32](4), ReadyReplicas: ptr.To[int32](3),
		Clusters: []placementv1beta1.ClusterWorkloadState{{
			ClusterName: "member-2", Available: "False", Reason: "NotYetAvailable",
			Workload: &placementv1beta1.WorkloadState{Replicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](1), UpdatedReplicas: ptr.To[int32](1),
				Conditions: []placementv1beta1.ObjectCondition{{Type: "Available", Status: "False", Reason: "MinimumReplicasUnavailable"}, {Type: "Progressing", Status: "True"}}},
			Warnings: []placementv1beta1.MemberWarning{{Reason: "Failed", Message: "Failed to pull image"}},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`Deployment web/web\s+\(all\)\s+1/2\s+3/4`,
		`member-2\s+False\s+1/2\s+NotYetAvailable; 1 updated; Available=False MinimumReplicasUnavailable; warning Failed: Failed to pull image\n`,
	} {
		if !regexp.MustCompile(line).MatchString(out.String()) {
			t.Errorf("no line matching %q in:\n%s", line, out.String())
		}
	}
}
