package membercluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func newReconciler(t *testing.T, now time.Time, objs ...client.Object) (*Reconciler, client.Client) {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&clusterv1beta1.MemberCluster{}, &clusterv1beta1.InternalMemberCluster{}).Build()
	return &Reconciler{
		Client: c, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(now),
		UnhealthyThreshold: time.Minute, ForceDeleteWait: 15 * time.Minute,
	}, c
}

func member(name string) *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta1.MemberClusterSpec{
			Identity:               rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "syncer", Namespace: "fleet-system"},
			HeartbeatPeriodSeconds: 30,
		},
	}
}

func TestJoinCreatesNamespaceRBACAndIMC(t *testing.T) {
	ctx := context.Background()
	r, c := newReconciler(t, time.Now(), member("m1"))
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "fleet-member-m1"}, ns); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	if ns.Labels[clusterv1beta1.FleetResourceLabelKey] != "true" {
		t.Errorf("namespace labels = %v", ns.Labels)
	}
	rb := &rbacv1.RoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fleet-member-m1", Name: "fleet-rolebinding-m1"}, rb); err != nil {
		t.Fatalf("rolebinding: %v", err)
	}
	if len(rb.Subjects) != 1 || rb.Subjects[0].Name != "syncer" || rb.RoleRef.Name != "fleet-role-m1" {
		t.Errorf("rolebinding = %+v", rb)
	}
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fleet-member-m1", Name: "m1"}, imc); err != nil {
		t.Fatalf("imc: %v", err)
	}
	if imc.Spec.State != clusterv1beta1.ClusterStateJoin || imc.Spec.HeartbeatPeriodSeconds != 30 {
		t.Errorf("imc spec = %+v", imc.Spec)
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "m1"}, mc); err != nil {
		t.Fatal(err)
	}
	if mc.Labels[clusterv1beta1.MemberClusterNameLabel] != "m1" || len(mc.Finalizers) != 1 {
		t.Errorf("label/finalizer missing: %v %v", mc.Labels, mc.Finalizers)
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterReadyToJoin) {
		t.Errorf("ReadyToJoin not true: %+v", mc.Status.Conditions)
	}
}

func TestJudgeHealth(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	// The hub's threshold is 1m; a member is never flagged before it missed
	// three of its own heartbeat periods.
	tests := []struct {
		name        string
		period      int32
		heartbeat   time.Duration // age; 0 means none
		want        metav1.ConditionStatus
		wantRecheck time.Duration // 0: no recheck
	}{
		{"no heartbeat yet", 10, 0, metav1.ConditionUnknown, 0},
		{"fresh heartbeat", 10, 10 * time.Second, metav1.ConditionTrue, 51 * time.Second},
		{"heartbeat lost", 10, 2 * time.Minute, metav1.ConditionFalse, 0},
		{"long period: three periods count", 30, 80 * time.Second, metav1.ConditionTrue, 11 * time.Second},
		{"long period: three periods missed", 30, 91 * time.Second, metav1.ConditionFalse, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newReconciler(t, now)
			mc := member("m1")
			mc.Spec.HeartbeatPeriodSeconds = tc.period
			if tc.heartbeat > 0 {
				mc.Status.AgentStatus = []clusterv1beta1.AgentStatus{{Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: metav1.NewTime(now.Add(-tc.heartbeat))}}
			}
			recheck := r.judgeHealth(mc, mc.Status.DeepCopy())
			got := meta.FindStatusCondition(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy)
			if got == nil || got.Status != tc.want {
				t.Fatalf("Healthy = %+v, want %s", got, tc.want)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck = %s, want %s (the moment the heartbeat expires)", recheck, tc.wantRecheck)
			}
		})
	}
}

// setUpAndReport has the hub set member m1 up, then its syncer report
// agent on the InternalMemberCluster.
func setUpAndReport(ctx context.Context, t *testing.T, r *Reconciler, c client.Client, agent clusterv1beta1.AgentStatus) *clusterv1beta1.InternalMemberCluster {
	t.Helper()
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}); err != nil {
		t.Fatal(err)
	}
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fleet-member-m1", Name: "m1"}, imc); err != nil {
		t.Fatal(err)
	}
	imc.Status.AgentStatus = []clusterv1beta1.AgentStatus{agent}
	if err := c.Status().Update(ctx, imc); err != nil {
		t.Fatal(err)
	}
	return imc
}

// A member whose heartbeat is lost is written once, not on every look: the
// syncer's last report (healthy) is copied afresh each time, and a new
// transition time for the hub's verdict would make each write bring the
// member back for another.
func TestHeartbeatLostIsWrittenOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	r, c := newReconciler(t, now, member("m1"))
	req := ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}
	heartbeat := metav1.NewTime(now.Add(-5 * time.Minute))
	setUpAndReport(ctx, t, r, c, clusterv1beta1.AgentStatus{
		Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: heartbeat,
		Conditions: []metav1.Condition{
			{Type: clusterv1beta1.AgentJoined, Status: metav1.ConditionTrue, Reason: "Joined", LastTransitionTime: heartbeat},
			{Type: clusterv1beta1.AgentHealthy, Status: metav1.ConditionTrue, Reason: "Healthy", LastTransitionTime: heartbeat},
		},
	})
	read := func() *clusterv1beta1.MemberCluster {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, req.NamespacedName, mc); err != nil {
			t.Fatal(err)
		}
		return mc
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	lost := read()
	if !meta.IsStatusConditionFalse(lost.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy) {
		t.Fatalf("Healthy = %+v, want False", lost.Status.Conditions)
	}
	// Found lost a while ago (the write above took the wall clock's time).
	meta.FindStatusCondition(lost.Status.AgentStatus[0].Conditions, clusterv1beta1.AgentHealthy).LastTransitionTime = metav1.NewTime(now.Add(-time.Hour))
	if err := c.Status().Update(ctx, lost); err != nil {
		t.Fatal(err)
	}
	r.Clock.(*clocktesting.FakeClock).Step(5 * time.Second)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if again := read(); again.ResourceVersion != lost.ResourceVersion {
		t.Errorf("the member was written again with nothing new: resource version %s → %s; agent status %+v",
			lost.ResourceVersion, again.ResourceVersion, again.Status.AgentStatus)
	}
}

func TestLeaveWaitsForSyncerThenCleansUp(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	mc := member("m1")
	mc.Finalizers = []string{clusterv1beta1.MemberClusterFinalizer}
	r, c := newReconciler(t, now, mc)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}
	// The syncer reports it joined.
	imc := setUpAndReport(ctx, t, r, c, clusterv1beta1.AgentStatus{Type: clusterv1beta1.MemberAgent, Conditions: []metav1.Condition{
		{Type: clusterv1beta1.AgentJoined, Status: metav1.ConditionTrue, Reason: "Joined", LastTransitionTime: metav1.Now()}}})
	if err := c.Delete(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("leave must wait for the syncer, got %+v", res)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fleet-member-m1", Name: "m1"}, imc); err != nil {
		t.Fatal(err)
	}
	if imc.Spec.State != clusterv1beta1.ClusterStateLeave {
		t.Errorf("IMC state = %s, want Leave", imc.Spec.State)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "fleet-member-m1"}, &corev1.Namespace{}); err != nil {
		t.Errorf("namespace must stay until the syncer confirms: %v", err)
	}
	// The syncer confirms; the hub removes the namespace.
	meta.SetStatusCondition(&imc.Status.AgentStatus[0].Conditions, metav1.Condition{Type: clusterv1beta1.AgentJoined, Status: metav1.ConditionFalse, Reason: "Left"})
	if err := c.Status().Update(ctx, imc); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "fleet-member-m1"}, &corev1.Namespace{}); err == nil {
		t.Errorf("namespace should be deleted once the syncer left")
	}
}
