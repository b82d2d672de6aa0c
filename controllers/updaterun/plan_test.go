package updaterun

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func env(v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"env": v}}
}

func TestPlanStagesOrdersClustersAndNamesApprovals(t *testing.T) {
	stages := []placementv1beta1.StageConfig{
		{Name: "canary", LabelSelector: env("canary"), BeforeStageTasks: []placementv1beta1.StageTask{{Type: placementv1beta1.StageTaskTypeApproval}}},
		{Name: "prod", LabelSelector: env("prod"), SortingLabelKey: ptr.To("order"),
			AfterStageTasks: []placementv1beta1.StageTask{{Type: placementv1beta1.StageTaskTypeTimedWait, WaitTime: &metav1.Duration{}}, {Type: placementv1beta1.StageTaskTypeApproval}}},
		{Name: "none"},
	}
	members := []member{
		{name: "p-a", labels: map[string]string{"env": "prod", "order": "10"}},
		{name: "c-b", labels: map[string]string{"env": "canary"}},
		{name: "p-b", labels: map[string]string{"env": "prod", "order": "2"}},
		{name: "c-a", labels: map[string]string{"env": "canary"}},
		{name: "p-c", labels: map[string]string{"env": "prod", "order": "2"}},
	}
	got, err := planStages("run", stages, members)
	if err != nil {
		t.Fatal(err)
	}
	order := func(s placementv1beta1.StageUpdatingStatus) string {
		var names []string
		for _, c := range s.Clusters {
			names = append(names, c.ClusterName)
		}
		return strings.Join(names, ",")
	}
	if o := order(got[0]); o != "c-a,c-b" {
		t.Errorf("canary order %s, want by name", o)
	}
	if o := order(got[1]); o != "p-b,p-c,p-a" {
		t.Errorf("prod order %s, want by integer label then name", o)
	}
	if len(got[2].Clusters) != 0 {
		t.Errorf("a stage without selector selected %v", got[2].Clusters)
	}
	if n := got[0].BeforeStageTaskStatus[0].ApprovalRequestName; n != "run-before-canary" {
		t.Errorf("before-stage approval named %s", n)
	}
	if got[1].AfterStageTaskStatus[0].ApprovalRequestName != "" || got[1].AfterStageTaskStatus[1].ApprovalRequestName != "run-after-prod" {
		t.Errorf("after-stage tasks %+v", got[1].AfterStageTaskStatus)
	}
}

func TestPlanStagesRefusesBadStrategies(t *testing.T) {
	for name, tc := range map[string]struct {
		stages []placementv1beta1.StageConfig
		want   string
	}{
		"overlap": {[]placementv1beta1.StageConfig{{Name: "a", LabelSelector: &metav1.LabelSelector{}}, {Name: "b", LabelSelector: env("x")}},
			`cluster "m1" is selected by both stage "a" and stage "b"`},
		"unassigned": {[]placementv1beta1.StageConfig{{Name: "a", LabelSelector: env("y")}}, "scheduled cluster(s) m1 are selected by no stage"},
		"sorting label missing": {[]placementv1beta1.StageConfig{{Name: "a", LabelSelector: env("x"), SortingLabelKey: ptr.To("order")}},
			`cluster "m1" of stage "a" has no label "order"`},
		"sorting label not integer": {[]placementv1beta1.StageConfig{{Name: "a", LabelSelector: env("x"), SortingLabelKey: ptr.To("env")}},
			`has label env="x", which is not an integer`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := planStages("run", tc.stages, []member{{name: "m1", labels: map[string]string{"env": "x"}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
