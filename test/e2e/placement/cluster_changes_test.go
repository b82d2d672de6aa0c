package placement

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// setTaints replaces a member cluster's taints, as
// `kubectl patch membercluster <name> --type merge -p '{"spec":{"taints":...}}'`.
func setTaints(name string, taints []clusterv1beta1.Taint) {
	fc := fleetClient()
	mc := &clusterv1beta1.MemberCluster{}
	mc.Name = name
	// A nil list is JSON null, which removes the field.
	patch := map[string]any{"spec": map[string]any{"taints": taints}}
	EventuallyWithOffset(1, func() error {
		return fc.Patch(framework.Ctx(), mc, client.RawPatch("application/merge-patch+json", mustJSON(patch)))
	}).Should(Succeed())
}

var _ = Describe("Taints and tolerations", Serial, func() {
	It("keep a PickAll placement off a tainted cluster unless the placement tolerates the taint", func() {
		maintenance := clusterv1beta1.Taint{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
		setTaints("member-4", []clusterv1beta1.Taint{maintenance})
		DeferCleanup(func() {
			setTaints("member-4", nil)
			Eventually(func(g Gomega) {
				g.Expect(framework.MemberCluster(g, fleetClient(), "member-4").Spec.Taints).To(BeEmpty())
			}).Should(Succeed())
		})

		t := newTeam("tolerations")
		plainNS, plainSelected := t.appNamespace("intolerant")
		tolerantNS, tolerantSelected := t.appNamespace("tolerant")
		t.place(newCRP("plain", pickAll(), namespaceSelector(plainNS)))
		tolerating := pickAll()
		tolerating.Tolerations = []placementv1beta1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		t.place(newCRP("tolerating", tolerating, namespaceSelector(tolerantNS)))

		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "plain"), []string{"member-1", "member-2", "member-3"}, plainSelected, "0")
			decisions := t.decisions(g, "plain")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-2", "member-3"}))
			g.Expect(decisions["member-4"].Reason).To(Equal("taint {Key:maintenance Value:true Effect:NoSchedule} cannot be tolerated"))
			expectOnlyOn(g, framework.Namespace(plainNS), "member-1", "member-2", "member-3")

			expectAvailable(g, t.getCRP(g, "tolerating"), allMembers(), tolerantSelected, "0")
			expectOnlyOn(g, framework.Namespace(tolerantNS), allMembers()...)
		}).Should(Succeed())
	})
})

var _ = Describe("A member cluster leaving", Serial, func() {
	It("is replaced under PickN without moving the others, and can join again", func() {
		t := newTeam("leaving")
		ns, selected := t.appNamespace("leaving")
		t.place(newCRP("app", pickN(2), namespaceSelector(ns)))

		// On a tie the lexicographically larger names win.
		var kept placementv1beta1.ClusterResourceBinding
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-3", "member-4"}, selected, "0")
			bindings := t.activeBindings(g, "app")
			g.Expect(keys(bindings)).To(Equal([]string{"member-3", "member-4"}))
			kept = bindings["member-3"]
			expectOnlyOn(g, framework.Namespace(ns), "member-3", "member-4")
		}).Should(Succeed())

		m4 := members.Named("member-4")
		DeferCleanup(func() {
			// Join again if the spec failed before it did.
			if apierrors.IsNotFound(fleetClient().Get(framework.Ctx(), client.ObjectKey{Name: m4.Name}, &clusterv1beta1.MemberCluster{})) {
				Expect(hub.Join(framework.Ctx(), m4)).To(Succeed())
			}
			Expect(hub.WaitMemberReady(framework.Ctx(), m4.Name)).To(Succeed())
		})
		By("unjoining member-4")
		Expect(hub.Unjoin(framework.Ctx(), m4)).To(Succeed())

		Eventually(func(g Gomega) {
			// The scheduler's reasons say why, if member-2 is not picked.
			g.Expect(selectedClusters(t.decisions(g, "app"))).To(Equal([]string{"member-2", "member-3"}), "decisions: %+v", t.decisions(g, "app"))
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-2", "member-3"}, selected, "0")
			bindings := t.activeBindings(g, "app")
			g.Expect(keys(bindings)).To(Equal([]string{"member-2", "member-3"}))
			g.Expect(bindings["member-3"].Name).To(Equal(kept.Name), "member-3 keeps its binding")
			g.Expect(bindings["member-3"].UID).To(Equal(kept.UID))
			g.Expect(t.latestPolicySnapshot(g, "app").Name).To(Equal("app-0"))
			decisions := t.decisions(g, "app")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-2", "member-3"}))
			g.Expect(decisions).NotTo(HaveKey("member-4"), "a cluster that left is no candidate")
			// What was placed on member-4 is not the fleet's business any
			// more; the other members have exactly what they should.
			for _, m := range []string{"member-1", "member-2", "member-3"} {
				err := memberClient(m).Get(framework.Ctx(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
				if m == "member-1" {
					g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace on member-1: %v", err)
				} else {
					g.Expect(err).NotTo(HaveOccurred(), m)
				}
			}
		}).Should(Succeed())

		By("joining member-4 again")
		Expect(hub.Join(framework.Ctx(), m4)).To(Succeed())
		Expect(hub.WaitMemberReady(framework.Ctx(), m4.Name)).To(Succeed())
		// Scheduling is IgnoredDuringExecution: the returning cluster does
		// not take its old place back.
		Consistently(func(g Gomega) {
			g.Expect(keys(t.activeBindings(g, "app"))).To(Equal([]string{"member-2", "member-3"}))
		}, "5s").Should(Succeed())

		By("placing on member-4 again from a team on each shard")
		for _, back := range teamOnEachShard("back") {
			ns, selected := back.appNamespace("back")
			back.place(newCRP("app", pickFixed("member-4"), namespaceSelector(ns)))
			Eventually(func(g Gomega) {
				expectAvailable(g, back.getCRP(g, "app"), []string{"member-4"}, selected, "0")
			}).Should(Succeed(), "placing on member-4 from %s", back.Path)
		}
	})
})
