package placements

import (
	"testing"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestRolloutStartedMessageNamesTheUpdateRun(t *testing.T) {
	b := &placementv1beta1.ClusterResourceBinding{}
	b.Spec.ResourceSnapshotName = "web-5-snapshot"
	const base = "Detected the new changes on the resources and started the rollout process, resourceSnapshotName: web-5-snapshot"
	if got := RolloutStartedMessage(b); got != base {
		t.Errorf("rolling update: %q", got)
	}
	b.Annotations = map[string]string{placementv1beta1.UpdateRunAnnotation: "ClusterStagedUpdateRun/example-run"}
	if got, want := RolloutStartedMessage(b), base+", clusterStagedUpdateRun: example-run"; got != want {
		t.Errorf("staged: %q, want %q", got, want)
	}
}
