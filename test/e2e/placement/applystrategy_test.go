package placement

import (
	"encoding/base64"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// clusterStatus is the placement status of one cluster.
func clusterStatus(g Gomega, p placementv1beta1.PlacementObj, cluster string) placementv1beta1.PerClusterPlacementStatus {
	for _, pcs := range p.GetPlacementStatus().PerClusterPlacementStatuses {
		if pcs.ClusterName == cluster {
			return pcs
		}
	}
	g.Expect(cluster).To(BeEmpty(), "no placement status for %s", cluster)
	return placementv1beta1.PerClusterPlacementStatus{}
}

// failedReasons lists the reasons of a cluster's failed placements.
func failedReasons(g Gomega, p placementv1beta1.PlacementObj, cluster string) []string {
	var out []string
	for _, f := range clusterStatus(g, p, cluster).FailedPlacements {
		out = append(out, f.Condition.Reason)
	}
	return out
}

var _ = Describe("Drift on a member", func() {
	It("with full comparison counts a label added on the member: reported with Always while the object stays applied, and holding the apply with IfNotDrifted", func() {
		t := newTeam("full-drift")
		ns, _ := t.appNamespace("full")
		crp := newCRP("app", pickFixed("member-1"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: placementv1beta1.WhenToApplyTypeAlways,
			ComparisonOption: placementv1beta1.ComparisonOptionTypeFullComparison}
		t.place(crp)
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			g.Expect(framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(clusterStatus(g, crp, "member-1").DriftedPlacements).To(BeEmpty(), "what the member's API server sets itself is no drift")
		}).Should(Succeed())

		By("labelling the namespace on the member by hand")
		update(memberClient("member-1"), framework.Namespace(ns), func(n *corev1.Namespace) { n.Labels["added-by"] = "hand" })
		labelDrift := []placementv1beta1.PatchDetail{{Path: "/metadata/labels/added-by", ValueInMember: "hand"}}
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			pcs := clusterStatus(g, crp, "member-1")
			g.Expect(pcs.DriftedPlacements).To(HaveLen(1), "%+v", pcs.DriftedPlacements)
			g.Expect(pcs.DriftedPlacements[0].ResourceIdentifier).To(Equal(namespaceID(ns)))
			g.Expect(pcs.DriftedPlacements[0].ObservedDrifts).To(Equal(labelDrift))
			g.Expect(pcs.FailedPlacements).To(BeEmpty(), "with Always a drift the hub does not set is no apply error")
			g.Expect(framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		By("switching to whenToApply IfNotDrifted")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Strategy.ApplyStrategy.WhenToApply = placementv1beta1.WhenToApplyTypeIfNotDrifted
		})
		Eventually(func(g Gomega) {
			pcs := clusterStatus(g, t.getCRP(g, "app"), "member-1")
			g.Expect(failedReasons(g, t.getCRP(g, "app"), "member-1")).To(ContainElement(placementv1beta1.ApplyResultFoundDrifts))
			g.Expect(pcs.DriftedPlacements).To(HaveLen(1))
			g.Expect(pcs.DriftedPlacements[0].ObservedDrifts).To(Equal(labelDrift))
		}).Should(Succeed())
	})

	It("is kept and reported with whenToApply IfNotDrifted, and reverted with Always", func() {
		t := newTeam("drift")
		ns, _ := t.appNamespace("drift")
		crp := newCRP("app", pickFixed("member-1"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: placementv1beta1.WhenToApplyTypeIfNotDrifted}
		t.place(crp)
		settings := &corev1.ConfigMap{}
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, settings)).To(Succeed())
		}).Should(Succeed())

		By("editing the ConfigMap on the member, as kubectl edit would")
		update(memberClient("member-1"), settings, func(cm *corev1.ConfigMap) { cm.Data["team"] = "edited on the member" })
		drifted := func(g Gomega) {
			crp := t.getCRP(g, "app")
			pcs := clusterStatus(g, crp, "member-1")
			g.Expect(pcs.DriftedPlacements).To(HaveLen(1), "%+v", pcs)
			d := pcs.DriftedPlacements[0]
			g.Expect(d.ResourceIdentifier).To(Equal(configMapID(ns, "settings")))
			g.Expect(d.ObservedDrifts).To(Equal([]placementv1beta1.PatchDetail{{Path: "/data/team", ValueInMember: "edited on the member", ValueInHub: t.Path}}))
			g.Expect(d.FirstDriftedObservedTime.IsZero()).To(BeFalse())
			g.Expect(d.ObservationTime.Before(&d.FirstDriftedObservedTime)).To(BeFalse())
			applied := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterAppliedConditionType))
			g.Expect(applied.Status).To(Equal(metav1.ConditionFalse), "%+v", applied)
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("team", "edited on the member"), "the drift is left alone")
		}
		Eventually(drifted).Should(Succeed())
		Consistently(drifted, "3s", "500ms").Should(Succeed())

		By("switching to whenToApply Always")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Strategy.ApplyStrategy.WhenToApply = placementv1beta1.WhenToApplyTypeAlways
		})
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			g.Expect(framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(clusterStatus(g, crp, "member-1").DriftedPlacements).To(BeEmpty())
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("team", t.Path), "the drift is reverted")
		}).Should(Succeed())

		By("a later edit is reverted at once")
		update(memberClient("member-1"), settings, func(cm *corev1.ConfigMap) { cm.Data["team"] = "edited again" })
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("team", t.Path))
		}).Should(Succeed())
	})
})

var _ = Describe("ReportDiff", func() {
	It("writes nothing to a member and reports the exact paths where its objects differ, Secret values hidden", func() {
		t := newTeam("report")
		ns := framework.UniqueName("legacy")
		existingNS := framework.Namespace(ns)
		existingCM := framework.ConfigMap(ns, "config", map[string]string{"v": "member", "member-only": "x"})
		existingSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "member-secret"}}
		preexisting("member-3", existingNS, existingCM, existingSecret)
		uids := uidsOn(Default, "member-3", existingNS, existingCM, existingSecret)
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("report")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, TakeOverNamespaces: []string{"legacy-*"},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })

		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "config", map[string]string{"v": "hub"}), framework.ConfigMap(ns, "missing", map[string]string{"a": "b"}),
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "hub-secret"}})
		crp := newCRP("report", pickFixed("member-3"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
		t.place(crp)

		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "report")
			st := crp.Status
			reported := framework.Condition(st.Conditions, string(placementv1beta1.ClusterResourcePlacementDiffReportedConditionType))
			g.Expect(reported.Status).To(Equal(metav1.ConditionTrue), "%+v%s", reported, describeClusters(&st))
			g.Expect(reported.Reason).To(Equal(placementv1beta1.DiffReportedStatusTrueReason))
			g.Expect(reported.ObservedGeneration).To(Equal(crp.Generation))
			for _, absent := range []placementv1beta1.ClusterResourcePlacementConditionType{
				placementv1beta1.ClusterResourcePlacementAppliedConditionType, placementv1beta1.ClusterResourcePlacementAvailableConditionType,
			} {
				g.Expect(meta.FindStatusCondition(st.Conditions, string(absent))).To(BeNil(), "ReportDiff applies nothing: no %s", absent)
			}
			pcs := clusterStatus(g, crp, "member-3")
			g.Expect(framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterDiffReportedConditionType)).Reason).To(Equal(placementv1beta1.AllWorkDiffReportedReason))
			diffs := map[string][]placementv1beta1.PatchDetail{}
			for _, d := range pcs.DiffedPlacements {
				diffs[fmt.Sprintf("%s %s", d.Kind, d.Name)] = d.ObservedDiffs
				if d.Name == "missing" {
					g.Expect(d.TargetClusterObservedGeneration).To(BeNil(), "the object does not exist on the member")
				}
			}
			g.Expect(diffs).To(HaveKeyWithValue("ConfigMap config", []placementv1beta1.PatchDetail{{Path: "/data/v", ValueInMember: "member", ValueInHub: "hub"}}))
			g.Expect(diffs).To(HaveKeyWithValue("Secret creds", []placementv1beta1.PatchDetail{{Path: "/data/password", ValueInMember: "(redacted)", ValueInHub: "(redacted)"}}))
			// KubeFleet's exact value for an object the member lacks.
			g.Expect(diffs).To(HaveKeyWithValue("ConfigMap missing", []placementv1beta1.PatchDetail{{Path: "/", ValueInHub: "(the whole object)"}}))
			for _, secret := range []string{"hub-secret", "member-secret"} {
				g.Expect(fmt.Sprintf("%+v", st)).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte(secret))), "no Secret value reaches the status")
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectUntouched(g, "member-3", existingNS, uids[fmt.Sprintf("%T %s/%s", existingNS, "", ns)])
			expectUntouched(g, "member-3", existingCM, uids[fmt.Sprintf("%T %s/%s", existingCM, ns, "config")])
			expectUntouched(g, "member-3", existingSecret, uids[fmt.Sprintf("%T %s/%s", existingSecret, ns, "creds")])
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKeyFromObject(existingCM), cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"v": "member", "member-only": "x"}))
			expectOnlyOn(g, framework.ConfigMap(ns, "missing", nil))
		}, "3s", "500ms").Should(Succeed())
	})
})

var _ = Describe("Taking over an object that exists on a member", func() {
	DescribeTable("follows whenToTakeOver",
		func(mode placementv1beta1.WhenToTakeOverType, hubValue string, wantReason string) {
			t := newTeam("takeover")
			ns := framework.UniqueName("legacy")
			existingCM := framework.ConfigMap(ns, "config", map[string]string{"v": "member"})
			preexisting("member-3", framework.Namespace(ns), existingCM)
			uid := uidsOn(Default, "member-3", existingCM)[fmt.Sprintf("%T %s/%s", existingCM, ns, "config")]
			grant := &tenancyv1alpha1.ClusterGrant{
				ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("takeover")},
				Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, TakeOverNamespaces: []string{"legacy-*"},
					ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
			}
			Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })

			t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "config", map[string]string{"v": hubValue}))
			crp := newCRP("takeover", pickFixed("member-3"), namespaceSelector(ns))
			crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: mode}
			t.place(crp)
			Eventually(func(g Gomega) {
				crp := t.getCRP(g, "takeover")
				cm := &corev1.ConfigMap{}
				g.Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKeyFromObject(existingCM), cm)).To(Succeed())
				g.Expect(cm.UID).To(Equal(uid), "the object is never re-created")
				if wantReason == "" {
					g.Expect(framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
					g.Expect(cm.Data).To(Equal(map[string]string{"v": hubValue}), "taken over")
					return
				}
				g.Expect(failedReasons(g, crp, "member-3")).To(ContainElement(wantReason))
				g.Expect(cm.Data).To(Equal(map[string]string{"v": "member"}), "not taken over")
			}).Should(Succeed())
		},
		Entry("Always adopts it", placementv1beta1.WhenToTakeOverTypeAlways, "hub", ""),
		Entry("IfNoDiff adopts it when it matches", placementv1beta1.WhenToTakeOverTypeIfNoDiff, "member", ""),
		Entry("IfNoDiff leaves it when it differs", placementv1beta1.WhenToTakeOverTypeIfNoDiff, "hub", placementv1beta1.ApplyResultFailedToTakeOver),
		Entry("Never leaves it", placementv1beta1.WhenToTakeOverTypeNever, "hub", placementv1beta1.ApplyResultNotTakenOver),
	)
})

var _ = Describe("An object another owner holds on a member", func() {
	It("is shared only with allowCoOwnership, and keeps its owner", func() {
		t := newTeam("coowner")
		ns := framework.UniqueName("legacy")
		owner := framework.ConfigMap(ns, "owner", nil)
		preexisting("member-3", framework.Namespace(ns), owner)
		Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKeyFromObject(owner), owner)).To(Succeed())
		owned := framework.ConfigMap(ns, "config", map[string]string{"v": "member"})
		owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
		preexisting("member-3", owned)
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("coowner")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, TakeOverNamespaces: []string{"legacy-*"},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "config", map[string]string{"v": "hub"}))
		t.place(newCRP("shared", pickFixed("member-3"), namespaceSelector(ns)))
		onMember := func(g Gomega) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{}
			g.ExpectWithOffset(1, memberClient("member-3").Get(framework.Ctx(), client.ObjectKeyFromObject(owned), cm)).To(Succeed())
			return cm
		}
		Eventually(func(g Gomega) {
			g.Expect(failedReasons(g, t.getCRP(g, "shared"), "member-3")).To(ContainElement(placementv1beta1.ApplyResultFailedToTakeOver))
			g.Expect(onMember(g).Data).To(Equal(map[string]string{"v": "member"}))
		}).Should(Succeed())

		t.updateCRP("shared", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{AllowCoOwnership: true}
		})
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "shared").Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			cm := onMember(g)
			g.Expect(cm.Data).To(Equal(map[string]string{"v": "hub"}))
			g.Expect(cm.OwnerReferences).To(ContainElement(HaveField("UID", owner.UID)), "its owner stays")
		}).Should(Succeed())
	})
})

var _ = Describe("Server-side apply", func() {
	It("keeps the fields the member's own managers add, and is not drift", func() {
		t := newTeam("ssa")
		ns, _ := t.appNamespace("ssa")
		crp := newCRP("app", pickFixed("member-2"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeServerSideApply,
			WhenToApply: placementv1beta1.WhenToApplyTypeIfNotDrifted}
		t.place(crp)
		key := client.ObjectKey{Namespace: ns, Name: "settings"}
		Eventually(func(g Gomega) {
			g.Expect(memberClient("member-2").Get(framework.Ctx(), key, &corev1.ConfigMap{})).To(Succeed())
		}).Should(Succeed())

		By("a member controller adding a label and a key of its own")
		own := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: map[string]string{"member-controller": "yes"}},
			Data:       map[string]string{"member-key": "kept"}}
		Expect(memberClient("member-2").Patch(framework.Ctx(), own, client.Apply, client.FieldOwner("member-controller"))).To(Succeed())

		By("changing the ConfigMap on the hub")
		update(t.Client, framework.ConfigMap(ns, "settings", nil), func(cm *corev1.ConfigMap) { cm.Data["team"] = "changed on the hub" })
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-2").Get(framework.Ctx(), key, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"team": "changed on the hub", "member-key": "kept"}))
			g.Expect(cm.Labels).To(HaveKeyWithValue("member-controller", "yes"))
			crp := t.getCRP(g, "app")
			g.Expect(clusterStatus(g, crp, "member-2").DriftedPlacements).To(BeEmpty())
			g.Expect(framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})
})

var _ = Describe("Server-side apply of a drifted field another manager took", func() {
	It("is a conflict without force, and taken back with force", func() {
		t := newTeam("ssa-force")
		ns, _ := t.appNamespace("ssa-force")
		crp := newCRP("app", pickFixed("member-4"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeServerSideApply}
		t.place(crp)
		key := client.ObjectKey{Namespace: ns, Name: "settings"}
		settings := &corev1.ConfigMap{}
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(memberClient("member-4").Get(framework.Ctx(), key, settings)).To(Succeed())
		}).Should(Succeed())

		By("another manager changing a field the placement applied")
		update(memberClient("member-4"), settings, func(cm *corev1.ConfigMap) { cm.Data["team"] = "taken" })
		Eventually(func(g Gomega) {
			g.Expect(failedReasons(g, t.getCRP(g, "app"), "member-4")).To(ContainElement(placementv1beta1.ApplyResultFailedToApply))
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-4").Get(framework.Ctx(), key, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("team", "taken"), "without force the other manager keeps the field")
		}).Should(Succeed())

		By("with force")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Strategy.ApplyStrategy.ServerSideApplyConfig = &placementv1beta1.ServerSideApplyConfig{ForceConflicts: true}
		})
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-4").Get(framework.Ctx(), key, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("team", t.Path), "taken back")
		}).Should(Succeed())
	})
})

var _ = Describe("A namespace on a member that is not taken over", func() {
	It("fails alone in the fleet's workspace, whose objects in it are applied as in KubeFleet; for a team each object in it fails too, saying why", func() {
		By("a placement of the fleet's workspace: only the namespace fails")
		p := platform()
		ns := framework.UniqueName("legacy")
		existing := framework.Namespace(ns)
		preexisting("member-3", existing)
		uid := uidsOn(Default, "member-3", existing)[fmt.Sprintf("%T %s/%s", existing, "", ns)]
		p.createNamespace(ns, framework.ConfigMap(ns, "config", map[string]string{"v": "hub"}))
		name := framework.UniqueName("not-taken")
		crp := newCRP(name, pickFixed("member-3"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToTakeOver: placementv1beta1.WhenToTakeOverTypeNever}
		p.place(crp)
		Eventually(func(g Gomega) {
			failed := clusterStatus(g, p.getCRP(g, name), "member-3").FailedPlacements
			g.Expect(failed).To(HaveLen(1), "%+v", failed)
			g.Expect(failed[0].Kind).To(Equal("Namespace"))
			g.Expect(failed[0].Condition.Reason).To(Equal(placementv1beta1.ApplyResultNotTakenOver))
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "config"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"v": "hub"}))
			expectUntouched(g, "member-3", existing, uid)
		}).Should(Succeed())

		By("a team's placement: the ConfigMap in the namespace fails too, naming the namespace")
		t := newTeam("not-taken")
		teamNS := framework.UniqueName("legacy")
		preexisting("member-3", framework.Namespace(teamNS))
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("not-taken")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })
		t.Create(framework.Ctx(), framework.Namespace(teamNS), framework.ConfigMap(teamNS, "config", map[string]string{"v": "hub"}))
		t.place(newCRP("not-taken", pickFixed("member-3"), namespaceSelector(teamNS)))
		Eventually(func(g Gomega) {
			failed := map[string]placementv1beta1.FailedResourcePlacement{}
			for _, f := range clusterStatus(g, t.getCRP(g, "not-taken"), "member-3").FailedPlacements {
				failed[f.Kind] = f
			}
			g.Expect(failed).To(HaveKey("Namespace"))
			g.Expect(failed).To(HaveKey("ConfigMap"))
			g.Expect(failed["ConfigMap"].Condition.Message).To(ContainSubstring("namespace " + teamNS))
			err := memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: teamNS, Name: "config"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing of the team is written into the namespace: %v", err)
		}).Should(Succeed())
	})
})

var _ = Describe("ReportDiff where the namespace on a member is not the placement's", func() {
	It("for a team lists each object not compared, with the member's reason and none of its values; in the fleet's workspace reports the diff itself, as KubeFleet does", func() {
		By("a team's placement: the reasons, per object")
		t := newTeam("report-owned")
		ns := framework.UniqueName("legacy")
		preexisting("member-3", framework.Namespace(ns), framework.ConfigMap(ns, "config", map[string]string{"v": "member-only-value"}))
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "config", map[string]string{"v": "hub"}))
		crp := newCRP("report", pickFixed("member-3"), namespaceSelector(ns))
		crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
		t.place(crp)
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "report")
			pcs := clusterStatus(g, crp, "member-3")
			reported := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterDiffReportedConditionType))
			g.Expect(reported.Status).To(Equal(metav1.ConditionFalse), "%+v", reported)
			failed := map[string]placementv1beta1.FailedResourcePlacement{}
			for _, f := range pcs.FailedPlacements {
				failed[f.Kind] = f
			}
			g.Expect(failed).To(HaveKey("Namespace"))
			g.Expect(failed["Namespace"].Condition.Type).To(Equal(placementv1beta1.WorkConditionTypeDiffReported))
			g.Expect(failed["Namespace"].Condition.Reason).To(Equal(placementv1beta1.ApplyResultNotTakenOver))
			g.Expect(failed["Namespace"].Condition.Message).To(ContainSubstring("namespace " + ns + " already exists on this member cluster"))
			g.Expect(failed).To(HaveKey("ConfigMap"))
			g.Expect(failed["ConfigMap"].Condition.Message).To(ContainSubstring("namespace " + ns))
			g.Expect(pcs.DiffedPlacements).To(BeEmpty())
			g.Expect(fmt.Sprintf("%+v", crp.Status)).NotTo(ContainSubstring("member-only-value"), "no value of the member's reaches the team")
		}).Should(Succeed())

		By("a placement of the fleet's workspace: the diff")
		p := platform()
		fleetNS := framework.UniqueName("legacy")
		preexisting("member-3", framework.Namespace(fleetNS), framework.ConfigMap(fleetNS, "config", map[string]string{"v": "member"}))
		p.createNamespace(fleetNS, framework.ConfigMap(fleetNS, "config", map[string]string{"v": "hub"}))
		name := framework.UniqueName("report")
		fleetCRP := newCRP(name, pickFixed("member-3"), namespaceSelector(fleetNS))
		fleetCRP.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
		p.place(fleetCRP)
		Eventually(func(g Gomega) {
			pcs := clusterStatus(g, p.getCRP(g, name), "member-3")
			reported := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterDiffReportedConditionType))
			g.Expect(reported.Status).To(Equal(metav1.ConditionTrue), "%+v %+v", reported, pcs.FailedPlacements)
			g.Expect(pcs.FailedPlacements).To(BeEmpty())
			diffs := map[string][]placementv1beta1.PatchDetail{}
			for _, d := range pcs.DiffedPlacements {
				diffs[d.Kind+" "+d.Name] = d.ObservedDiffs
			}
			g.Expect(diffs).To(HaveKeyWithValue("ConfigMap config", []placementv1beta1.PatchDetail{{Path: "/data/v", ValueInMember: "member", ValueInHub: "hub"}}))
		}).Should(Succeed())
	})
})
