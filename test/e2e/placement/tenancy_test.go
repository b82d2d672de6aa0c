package placement

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// updateGrant changes a ClusterGrant in root:fleet, retrying on conflicts.
func updateGrant(name string, change func(*tenancyv1alpha1.ClusterGrant)) {
	update(fleetClient(), &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: name}}, change)
}

// limitAllTeams narrows the default grant all-teams to the given
// workspaces until the spec ends (the spec must be Serial).
func limitAllTeams(paths ...string) {
	allTeams := &tenancyv1alpha1.ClusterGrant{}
	ExpectWithOffset(1, fleetClient().Get(framework.Ctx(), client.ObjectKey{Name: "all-teams"}, allTeams)).To(Succeed())
	saved := *allTeams.Spec.DeepCopy()
	updateGrant("all-teams", func(g *tenancyv1alpha1.ClusterGrant) { g.Spec.Workspaces = paths })
	DeferCleanup(updateGrant, "all-teams", func(g *tenancyv1alpha1.ClusterGrant) { g.Spec = saved })
}

var _ = Describe("Two teams", Serial, func() {
	It("see only their own placements, and place only onto the clusters granted to them", func() {
		a, b := newTeam("team-a"), newTeam("team-b")

		By("granting team B only the canary clusters, for this spec")
		fc := fleetClient()
		limitAllTeams(a.Path)
		canary := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("team-b-canary")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{
				Workspaces:      []string{b.Path},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}},
			},
		}
		Expect(fc.Create(framework.Ctx(), canary)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), canary))).To(Succeed()) })

		// Both teams name their placement "app".
		nsA, selectedA := a.appNamespace("team-a")
		nsB, selectedB := b.appNamespace("team-b")
		a.place(newCRP("app", pickAll(), namespaceSelector(nsA)))
		b.place(newCRP("app", pickAll(), namespaceSelector(nsB)))

		Eventually(func(g Gomega) {
			expectAvailable(g, a.getCRP(g, "app"), allMembers(), selectedA, "0")
			expectAvailable(g, b.getCRP(g, "app"), []string{"member-3"}, selectedB, "0")
			decisions := b.decisions(g, "app")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-3"}))
			for _, m := range []string{"member-1", "member-2", "member-4"} {
				g.Expect(decisions[m].Reason).To(Equal(fmt.Sprintf("cluster %q is not granted to this placement's workspace", m)))
			}
			expectOnlyOn(g, framework.Namespace(nsA), allMembers()...)
			expectOnlyOn(g, framework.Namespace(nsB), "member-3")
		}).Should(Succeed())
		cm := &corev1.ConfigMap{}
		Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: nsB, Name: "settings"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("team", b.Path))

		By("checking that neither team sees the other's placement objects")
		for _, tc := range []struct {
			self, other    *team
			ownNS, otherNS string
			bindings       int
		}{{a, b, nsA, nsB, 4}, {b, a, nsB, nsA, 1}} {
			own := tc.self.getCRP(Default, "app")
			other := tc.other.getCRP(Default, "app")
			Expect(own.UID).NotTo(Equal(other.UID))
			crps := &placementv1beta1.ClusterResourcePlacementList{}
			Expect(tc.self.Client.List(framework.Ctx(), crps)).To(Succeed())
			Expect(crps.Items).To(HaveLen(1), "placements in %s", tc.self.Path)
			Expect(crps.Items[0].UID).To(Equal(own.UID))
			bindings := &placementv1beta1.ClusterResourceBindingList{}
			Expect(tc.self.Client.List(framework.Ctx(), bindings)).To(Succeed())
			Expect(bindings.Items).To(HaveLen(tc.bindings), "bindings in %s", tc.self.Path)
			for _, b := range bindings.Items {
				Expect(b.OwnerReferences).To(ContainElement(HaveField("UID", own.UID)))
			}
			nss := &corev1.NamespaceList{}
			Expect(tc.self.Client.List(framework.Ctx(), nss)).To(Succeed())
			var names []string
			for _, ns := range nss.Items {
				names = append(names, ns.Name)
			}
			Expect(names).To(ContainElement(tc.ownNS))
			Expect(names).NotTo(ContainElement(tc.otherNS), "namespaces in %s", tc.self.Path)
		}

		By("checking that the Work on the hub says which workspace it came from")
		for _, tc := range []struct {
			t        *team
			clusters []string
		}{{a, allMembers()}, {b, []string{"member-3"}}} {
			ws := tc.t.logicalCluster(Default, "app")
			works := &placementv1beta1.WorkList{}
			Expect(worksClient().List(framework.Ctx(), works, client.MatchingLabels{placementv1beta1.WorkspaceLabel: ws})).To(Succeed())
			var namespaces []string
			for _, w := range works.Items {
				namespaces = append(namespaces, w.Namespace)
				Expect(w.Labels).To(HaveKeyWithValue(placementv1beta1.PlacementTrackingLabel, "app"))
				Expect(w.Name).To(HavePrefix(ws+"."), "Work names are unique across workspaces")
				var manifests []string
				for _, m := range w.Spec.Workload.Manifests {
					manifests = append(manifests, string(m.Raw))
				}
				Expect(manifests).To(ContainElement(ContainSubstring(tc.t.Path)), "Work %s carries the team's own objects", w.Name)
			}
			var want []string
			for _, m := range tc.clusters {
				want = append(want, "fleet-member-"+m)
			}
			Expect(namespaces).To(ConsistOf(want), "Work of %s (%s)", tc.t.Path, ws)
		}
	})
})

var _ = Describe("Two teams placing the same object on the same cluster", func() {
	It("report the conflict on the second placement and leave the first team's object alone", func() {
		a, b := newTeam("conflict-a"), newTeam("conflict-b")
		ns := framework.UniqueName("shared")
		a.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"owner": "team-a"}))
		b.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"owner": "team-b"}))
		selected := []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings")}

		a.place(newCRP("shared", pickFixed("member-2"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, a.getCRP(g, "shared"), []string{"member-2"}, selected, "0")
		}).Should(Succeed())

		second := newCRP("shared", pickFixed("member-2"), namespaceSelector(ns))
		b.place(second)
		Eventually(func(g Gomega) {
			crp := b.getCRP(g, "shared")
			applied := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAppliedConditionType))
			g.Expect(applied.Status).To(Equal(metav1.ConditionFalse), "%+v", applied)
			g.Expect(applied.Reason).To(Equal(placementv1beta1.ApplyFailedReason))
			g.Expect(crp.Status.ObservedResourceIndex).To(Equal("0"))
			g.Expect(crp.Status.SelectedResources).To(ConsistOf(selected))
			g.Expect(crp.Status.PerClusterPlacementStatuses).To(HaveLen(1))
			pcs := crp.Status.PerClusterPlacementStatuses[0]
			g.Expect(pcs.ClusterName).To(Equal("member-2"))
			c := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterAppliedConditionType))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "%+v", c)
			g.Expect(c.Reason).To(Equal(placementv1beta1.WorkNotAppliedReason))
			var conflicts []placementv1beta1.ResourceIdentifier
			for _, f := range pcs.FailedPlacements {
				g.Expect(f.Condition.Reason).To(Equal(placementv1beta1.ApplyResultFailedToTakeOver), "%+v", f)
				g.Expect(f.Condition.Status).To(Equal(metav1.ConditionFalse))
				conflicts = append(conflicts, f.ResourceIdentifier)
			}
			g.Expect(conflicts).To(ContainElement(configMapID(ns, "settings")))

			// The first team's placement and object are untouched.
			expectAvailable(g, a.getCRP(g, "shared"), []string{"member-2"}, selected, "0")
		}).Should(Succeed())
		expectTeamA := func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-2").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"owner": "team-a"}))
			g.Expect(cm.OwnerReferences).To(HaveLen(1), "only team A's Work owns it")
		}
		Eventually(expectTeamA).Should(Succeed())

		By("deleting the second placement, which never owned the object")
		b.deletePlacement(second)
		Eventually(func(g Gomega) {
			expectTeamA(g)
			expectAvailable(g, a.getCRP(g, "shared"), []string{"member-2"}, selected, "0")
		}).Should(Succeed())
		Consistently(expectTeamA, "3s").Should(Succeed())
	})
})
