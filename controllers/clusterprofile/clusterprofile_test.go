package clusterprofile

import (
	"strings"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

func member() *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member-1", Labels: map[string]string{"env": "prod"}},
		Status: clusterv1beta1.MemberClusterStatus{
			Properties: map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
				clusterv1beta1.K8sVersionProperty:                  {Value: "v1.32.3"},
				clusterv1beta1.NodeCountProperty:                   {Value: "3"},
				clusterv1beta1.ClusterCertificateAuthorityProperty: {Value: strings.Repeat("x", 2000)},
			},
			Conditions: []metav1.Condition{{Type: clusterv1beta1.ConditionTypeMemberClusterHealthy, Status: metav1.ConditionFalse,
				Reason: clusterv1beta1.ReasonMemberAgentHeartbeatLost, Message: "no heartbeat"}},
		},
	}
}

func TestProfileOfAMember(t *testing.T) {
	p := profileOf(member())
	if p.Namespace != Namespace || p.Name != "member-1" || p.Spec.ClusterManager.Name != ClusterManager || p.Spec.DisplayName != "member-1" {
		t.Errorf("profile %s/%s managed by %q", p.Namespace, p.Name, p.Spec.ClusterManager.Name)
	}
	if p.Labels["env"] != "prod" || p.Labels[inventoryv1alpha1.LabelClusterManagerKey] != ClusterManager {
		t.Errorf("labels %v", p.Labels)
	}
	if p.Status.Version.Kubernetes != "v1.32.3" {
		t.Errorf("version %q", p.Status.Version.Kubernetes)
	}
	if len(p.Status.Properties) != 2 || p.Status.Properties[0].Name != string(clusterv1beta1.K8sVersionProperty) {
		t.Errorf("properties %+v: a value over the API's 1,024 characters is left out, the rest sorted", p.Status.Properties)
	}
	h := p.Status.Conditions[0]
	if h.Type != inventoryv1alpha1.ClusterConditionControlPlaneHealthy || h.Status != metav1.ConditionFalse || h.Reason != clusterv1beta1.ReasonMemberAgentHeartbeatLost {
		t.Errorf("health %+v", h)
	}
	if j := p.Status.Conditions[1]; j.Type != JoinedCondition || j.Status != metav1.ConditionUnknown {
		t.Errorf("joined %+v", j)
	}
}

func TestProfilesDoNotFollowHeartbeats(t *testing.T) {
	old, beat := member(), member()
	beat.Status.Properties[clusterv1beta1.NodeCountProperty] = clusterv1beta1.PropertyValue{Value: "3", ObservationTime: metav1.Now()}
	beat.Status.AgentStatus = []clusterv1beta1.AgentStatus{{LastReceivedHeartbeat: metav1.Now()}}
	if (profileChanged{}).Update(event.UpdateEvent{ObjectOld: old, ObjectNew: beat}) {
		t.Error("a heartbeat rewrites every workspace's profile")
	}
	healthy := member()
	healthy.Status.Conditions[0].Status, healthy.Status.Conditions[0].Reason = metav1.ConditionTrue, clusterv1beta1.ReasonMemberClusterAPIServerHealthy
	more := member()
	more.Status.Properties[clusterv1beta1.NodeCountProperty] = clusterv1beta1.PropertyValue{Value: "4"}
	relabelled := member()
	relabelled.Labels["env"] = "canary"
	for name, n := range map[string]*clusterv1beta1.MemberCluster{"health": healthy, "a property's value": more, "labels": relabelled} {
		if !(profileChanged{}).Update(event.UpdateEvent{ObjectOld: old, ObjectNew: n}) {
			t.Errorf("a change of %s does not reach the profiles", name)
		}
	}
}

func TestConditionsKeepTheirTransitionTimes(t *testing.T) {
	p := profileOf(member())
	before := metav1.NewTime(metav1.Now().Add(-3600e9))
	current := []metav1.Condition{{Type: inventoryv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionFalse,
		Reason: clusterv1beta1.ReasonMemberAgentHeartbeatLost, LastTransitionTime: before}}
	setConditions(&p.Status, current, 2)
	if c := p.Status.Conditions[0]; !c.LastTransitionTime.Equal(&before) || c.ObservedGeneration != 2 {
		t.Errorf("an unchanged condition %+v", c)
	}
}

func binding(workspace string, phase apisv1alpha2.APIBindingPhaseType) *apisv1alpha2.APIBinding {
	b := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "cluster-inventory",
		Annotations: map[string]string{logicalcluster.AnnotationKey: workspace}}}
	b.Status.Phase = phase
	return b
}

func TestWorkspacesAreServedWhileTheyBindTheExport(t *testing.T) {
	r := &Reconciler{workspaces: map[logicalcluster.Name]bool{}, bound: make(chan event.GenericEvent, 4)}
	r.bindingChanged(binding("team-a", apisv1alpha2.APIBindingPhaseBinding))
	if r.serves("team-a") || len(r.bound) != 0 {
		t.Fatal("a workspace whose binding is not Bound yet is served")
	}
	r.bindingChanged(binding("team-a", apisv1alpha2.APIBindingPhaseBound))
	if !r.serves("team-a") {
		t.Fatal("a workspace that binds the export is not served")
	}
	if e := <-r.bound; e.Object.GetName() != "team-a" {
		t.Errorf("enqueued %q", e.Object.GetName())
	}
	r.bindingChanged(binding("team-b", apisv1alpha2.APIBindingPhaseBound))
	r.bindingGone(toolscache.DeletedFinalStateUnknown{Obj: binding("team-a", apisv1alpha2.APIBindingPhaseBound)})
	if r.serves("team-a") || !r.serves("team-b") {
		t.Errorf("after team-a's binding went: team-a served %t, team-b served %t", r.serves("team-a"), r.serves("team-b"))
	}
}
