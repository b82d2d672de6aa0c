package members

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/syncer/agent"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

func workAvailable(g Gomega, w *placementv1beta1.Work) {
	got := &placementv1beta1.Work{}
	g.Expect(fleetClient().Get(framework.Ctx(), client.ObjectKeyFromObject(w), got)).To(Succeed())
	g.Expect(framework.Condition(got.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable).Status).To(Equal(metav1.ConditionTrue))
}

var _ = Describe("Heartbeats", Serial, func() {
	It("mark a member unhealthy when its syncer stops, and healthy again when it is back", func() {
		m := members.Named("member-2")
		Expect(m.StopSyncer()).To(Succeed())
		Eventually(func(g Gomega) {
			health := framework.Condition(framework.MemberCluster(g, fleetClient(), m.Name).Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy)
			g.Expect(health.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(health.Reason).To(Equal(clusterv1beta1.ReasonMemberAgentHeartbeatLost))
		}, timeout, interval).Should(Succeed())

		Expect(hub.Join(framework.Ctx(), m)).To(Succeed())
		Eventually(func(g Gomega) {
			health := framework.Condition(framework.MemberCluster(g, fleetClient(), m.Name).Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy)
			g.Expect(health.Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
	})
})

var _ = Describe("An unreachable hub", Serial, func() {
	It("leaves applied objects alone, and the syncer resumes without re-applying unchanged ones", func() {
		m := members.Named("member-1")
		fc, mc := fleetClient(), framework.MemberClient(m, scheme)
		work := newWork(m.Name, "survives-outage", framework.Namespace("outage"), framework.ConfigMap("outage", "kept", map[string]string{"k": "v"}))
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		Eventually(func(g Gomega) { workAvailable(g, work) }, timeout, interval).Should(Succeed())
		before := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "outage", Name: "kept"}, before)).To(Succeed())

		By("stopping the hub")
		Expect(hub.Stop()).To(Succeed())
		Consistently(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "outage", Name: "kept"}, cm)).To(Succeed())
			g.Expect(cm.ResourceVersion).To(Equal(before.ResourceVersion))
		}, 10*time.Second, time.Second).Should(Succeed())

		By("starting the hub again")
		Expect(hub.Start(framework.Ctx())).To(Succeed())
		// A heartbeat after the restart shows the syncer is back.
		restarted := time.Now()
		Eventually(func(g Gomega) {
			mcStatus := framework.MemberCluster(g, fleetClient(), m.Name).Status
			g.Expect(mcStatus.AgentStatus).NotTo(BeEmpty())
			g.Expect(mcStatus.AgentStatus[0].LastReceivedHeartbeat.Time).To(BeTemporally(">", restarted))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) { workAvailable(g, work) }, timeout, interval).Should(Succeed())
		after := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "outage", Name: "kept"}, after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "an unchanged object must not be written again")
	})
})

var _ = Describe("Leaving and joining again", Serial, Ordered, func() {
	It("leaves: the hub removes the member's namespace, the member keeps what was placed", func() {
		member3 := members.Named("member-3")
		fc, mc := fleetClient(), framework.MemberClient(member3, scheme)
		work := newWork(member3.Name, "before-leaving", framework.Namespace("left-behind"), framework.ConfigMap("left-behind", "kept", nil))
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		Eventually(func(g Gomega) { workAvailable(g, work) }, timeout, interval).Should(Succeed())

		Expect(hub.Unjoin(framework.Ctx(), member3)).To(Succeed())
		Expect(apierrors.IsNotFound(fc.Get(framework.Ctx(), client.ObjectKey{Name: member3.Name}, &clusterv1beta1.MemberCluster{}))).To(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(fc.Get(framework.Ctx(), client.ObjectKey{Name: "fleet-member-" + member3.Name}, &corev1.Namespace{}))
		}, timeout, interval).Should(BeTrue())
		Consistently(func() error {
			return mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "left-behind", Name: "kept"}, &corev1.ConfigMap{})
		}, 5*time.Second, time.Second).Should(Succeed())
	})

	It("joins again and takes the same Work back without losing anything", func() {
		member3 := members.Named("member-3")
		fc, mc := fleetClient(), framework.MemberClient(member3, scheme)
		Expect(hub.Join(framework.Ctx(), member3)).To(Succeed())
		Eventually(func(g Gomega) {
			joined := framework.Condition(framework.MemberCluster(g, fleetClient(), member3.Name).Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined)
			g.Expect(joined.Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
		again := newWork(member3.Name, "before-leaving", framework.Namespace("left-behind"), framework.ConfigMap("left-behind", "kept", nil))
		Expect(fc.Create(framework.Ctx(), again)).To(Succeed())
		Eventually(func(g Gomega) { workAvailable(g, again) }, timeout, interval).Should(Succeed())
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "left-behind", Name: "kept"}, &corev1.ConfigMap{})).To(Succeed())
	})
})

// leaseHolder is who holds the syncer lease on member cluster m.
func leaseHolder(g Gomega, m *localfleet.Member) string {
	lease := &coordinationv1.Lease{}
	g.ExpectWithOffset(1, framework.MemberClient(m, scheme).Get(framework.Ctx(), client.ObjectKey{Namespace: clusterv1beta1.FleetSystemNamespace, Name: agent.LeaseName}, lease)).To(Succeed())
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

var _ = Describe("A second syncer for the same member", Serial, func() {
	It("waits for the lease instead of applying alongside, and takes over when the first one stops", func() {
		m := members.Named("member-2")
		var first string
		Eventually(func(g Gomega) {
			first = leaseHolder(g, m)
			g.Expect(first).NotTo(BeEmpty())
		}, timeout, interval).Should(Succeed())

		second, err := m.StartExtraSyncer(filepath.Join(m.StateDir, m.Name, "second-syncer.log"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_ = second.Process.Kill()
			_ = second.Wait()
			Expect(hub.Join(framework.Ctx(), m)).To(Succeed())
			Expect(hub.WaitMemberReady(framework.Ctx(), m.Name)).To(Succeed())
		})
		Consistently(func(g Gomega) { g.Expect(leaseHolder(g, m)).To(Equal(first)) }, 10*time.Second, time.Second).Should(Succeed())

		By("stopping the first syncer")
		Expect(m.StopSyncer()).To(Succeed())
		Eventually(func(g Gomega) {
			holder := leaseHolder(g, m)
			g.Expect(holder).NotTo(BeEmpty())
			g.Expect(holder).NotTo(Equal(first))
		}, timeout, interval).Should(Succeed())
		work := newWork(m.Name, "second-syncer", framework.ConfigMap("default", "from-the-second-syncer", nil))
		Expect(fleetClient().Create(framework.Ctx(), work)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), work))).To(Succeed()) })
		Eventually(func(g Gomega) { workAvailable(g, work) }, timeout, interval).Should(Succeed())
	})
})

var _ = Describe("Unjoining a member whose syncer does not confirm", Serial, func() {
	It("revokes the syncer's hub credential even though leaving times out", func() {
		m := members.Named("member-3")
		_, syncer := syncerClient(m)
		Expect(syncer.List(framework.Ctx(), &placementv1beta1.WorkList{}, client.InNamespace("fleet-member-"+m.Name))).To(Succeed())

		Expect(m.StopSyncer()).To(Succeed())
		DeferCleanup(func() {
			// The hub lets the member go after its force-delete wait.
			Eventually(func() bool {
				return apierrors.IsNotFound(fleetClient().Get(framework.Ctx(), client.ObjectKey{Name: m.Name}, &clusterv1beta1.MemberCluster{}))
			}, 3*time.Minute, time.Second).Should(BeTrue())
			Expect(hub.Join(framework.Ctx(), m)).To(Succeed())
			Expect(hub.WaitMemberReady(framework.Ctx(), m.Name)).To(Succeed())
		})
		err := hub.Fleet(framework.Ctx(), "unjoin", m.Name, "--state-dir", m.StateDir, "--timeout", "3s")
		Expect(err).To(MatchError(ContainSubstring("is still leaving")))
		Expect(err).To(MatchError(ContainSubstring("hub credential is revoked")))
		Eventually(func() bool {
			return apierrors.IsUnauthorized(syncer.List(framework.Ctx(), &placementv1beta1.WorkList{}, client.InNamespace("fleet-member-"+m.Name)))
		}, timeout, interval).Should(BeTrue(), "the syncer's token no longer works")
	})
})
