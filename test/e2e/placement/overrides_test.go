package placement

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/override"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

func jsonPatch(op placementv1beta1.JSONPatchOverrideOperator, path string, value any) placementv1beta1.JSONPatchOverride {
	p := placementv1beta1.JSONPatchOverride{Operator: op, Path: path}
	if value != nil {
		p.Value = apiextensionsv1.JSON{Raw: mustJSON(value)}
	}
	return p
}

// onClusters selects clusters by labels; no labels selects every cluster.
func onClusters(labels map[string]string) *placementv1beta1.ClusterSelector {
	if len(labels) == 0 {
		return &placementv1beta1.ClusterSelector{}
	}
	return &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}}
}

func patchRule(clusters *placementv1beta1.ClusterSelector, ops ...placementv1beta1.JSONPatchOverride) placementv1beta1.OverrideRule {
	return placementv1beta1.OverrideRule{ClusterSelector: clusters, OverrideType: placementv1beta1.JSONPatchOverrideType, JSONPatchOverrides: ops}
}

func deleteRule(clusters *placementv1beta1.ClusterSelector) placementv1beta1.OverrideRule {
	return placementv1beta1.OverrideRule{ClusterSelector: clusters, OverrideType: placementv1beta1.DeleteOverrideType}
}

func resourceOverride(ns, name string, selectors []placementv1beta1.ResourceSelector, rules ...placementv1beta1.OverrideRule) *placementv1beta1.ResourceOverride {
	return &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: selectors,
			Policy:            &placementv1beta1.OverridePolicy{OverrideRules: rules},
		},
	}
}

func selectConfigMap(name string) placementv1beta1.ResourceSelector {
	return placementv1beta1.ResourceSelector{Group: "", Version: "v1", Kind: "ConfigMap", Name: name}
}

func configMapOn(g Gomega, m, ns, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	g.ExpectWithOffset(1, memberClient(m).Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed(), "ConfigMap %s/%s on %s", ns, name, m)
	return cm
}

// applied is what a cluster's status should list of the overrides.
type applied struct {
	cro []string
	ro  []placementv1beta1.NamespacedName
}

// expectOverridden checks the Overridden conditions and the overrides each
// cluster lists, once the placement is Available.
func expectOverridden(g Gomega, crp *placementv1beta1.ClusterResourcePlacement, want map[string]applied) {
	st := crp.Status
	c := framework.Condition(st.Conditions, string(placementv1beta1.ClusterResourcePlacementOverriddenConditionType))
	g.ExpectWithOffset(1, c.Status).To(Equal(metav1.ConditionTrue), "%+v", c)
	g.ExpectWithOffset(1, c.Reason).To(Equal(placementv1beta1.OverriddenSucceededReason), "%+v", c)
	available := framework.Condition(st.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType))
	g.ExpectWithOffset(1, available.Status).To(Equal(metav1.ConditionTrue), "%+v%s", available, describeClusters(&st))
	g.ExpectWithOffset(1, available.ObservedGeneration).To(Equal(crp.Generation))
	var clusters []string
	for _, pcs := range st.PerClusterPlacementStatuses {
		clusters = append(clusters, pcs.ClusterName)
		w := want[pcs.ClusterName]
		g.ExpectWithOffset(1, pcs.ApplicableClusterResourceOverrides).To(Equal(w.cro), "applicableClusterResourceOverrides of %s", pcs.ClusterName)
		g.ExpectWithOffset(1, pcs.ApplicableResourceOverrides).To(Equal(w.ro), "applicableResourceOverrides of %s", pcs.ClusterName)
		reason := placementv1beta1.OverriddenSucceededReason
		if len(w.cro)+len(w.ro) == 0 {
			reason = placementv1beta1.OverrideNotSpecifiedReason
		}
		c := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterOverriddenConditionType))
		g.ExpectWithOffset(1, c.Status).To(Equal(metav1.ConditionTrue), "Overridden on %s: %+v", pcs.ClusterName, c)
		g.ExpectWithOffset(1, c.Reason).To(Equal(reason), "Overridden on %s: %+v", pcs.ClusterName, c)
	}
	g.ExpectWithOffset(1, clusters).To(ConsistOf(keys(want)))
}

// invalidOverrideEvents lists the messages of the InvalidOverride events of
// a ResourceOverride.
func invalidOverrideEvents(g Gomega, t *team, ns, name string) []string {
	return t.eventMessages(g, "ResourceOverride", ns, name, override.InvalidOverrideReason)
}

var _ = Describe("Overrides", func() {
	It("render each cluster's copy: variables, rules per cluster label, ResourceOverride over ClusterResourceOverride, Delete", func() {
		t := newTeam("overrides")
		ns := framework.UniqueName("app")
		labelled := func(cm *corev1.ConfigMap) *corev1.ConfigMap {
			cm.Labels = map[string]string{"app": "demo"}
			return cm
		}
		t.Create(framework.Ctx(), framework.Namespace(ns), labelled(framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"})), labelled(framework.ConfigMap(ns, "extra", map[string]string{"a": "b"})))
		cro := &placementv1beta1.ClusterResourceOverride{
			ObjectMeta: metav1.ObjectMeta{Name: "by-env"},
			Spec: placementv1beta1.ClusterResourceOverrideSpec{
				Placement:                &placementv1beta1.PlacementRef{Name: "app"},
				ClusterResourceSelectors: []placementv1beta1.ResourceSelectorTerm{namespaceSelector(ns)},
				Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{
					// Everything in the namespace, the namespace included,
					// on production clusters.
					patchRule(onClusters(map[string]string{"env": "prod"}), jsonPatch("add", "/metadata/labels/cluster", "${MEMBER-CLUSTER-NAME}")),
					// A rule without a cluster selector selects no cluster.
					{OverrideType: placementv1beta1.DeleteOverrideType},
				}},
			},
		}
		// On every cluster; on production clusters it wins over the
		// ClusterResourceOverride's label.
		settings := resourceOverride(ns, "settings", []placementv1beta1.ResourceSelector{selectConfigMap("settings")},
			patchRule(onClusters(nil), jsonPatch("add", "/metadata/labels/cluster", "${MEMBER-CLUSTER-NAME}-ro"), jsonPatch("replace", "/data/color", "${MEMBER-CLUSTER-LABEL-KEY-region}")))
		// The other ConfigMap stays off staging clusters.
		extra := resourceOverride(ns, "extra", []placementv1beta1.ResourceSelector{selectConfigMap("extra")}, deleteRule(onClusters(map[string]string{"env": "staging"})))
		t.Create(framework.Ctx(), cro, settings, extra)
		t.place(newCRP("app", nil, namespaceSelector(ns)))

		roSettings := []placementv1beta1.NamespacedName{{Namespace: ns, Name: "settings-0"}}
		Eventually(func(g Gomega) {
			expectOverridden(g, t.getCRP(g, "app"), map[string]applied{
				"member-1": {cro: []string{"by-env-0"}, ro: roSettings},
				"member-2": {cro: []string{"by-env-0"}, ro: roSettings},
				"member-3": {ro: roSettings},
				"member-4": {ro: []placementv1beta1.NamespacedName{{Namespace: ns, Name: "extra-0"}, {Namespace: ns, Name: "settings-0"}}},
			})
			regions := map[string]string{"member-1": "eastus", "member-2": "westus", "member-3": "eastus", "member-4": "westeurope"}
			for m, region := range regions {
				settings := configMapOn(g, m, ns, "settings")
				g.Expect(settings.Data).To(HaveKeyWithValue("color", region), "on %s", m)
				g.Expect(settings.Labels).To(HaveKeyWithValue("cluster", m+"-ro"), "the ResourceOverride wins on %s", m)
				nsOn := &corev1.Namespace{}
				g.Expect(memberClient(m).Get(framework.Ctx(), client.ObjectKey{Name: ns}, nsOn)).To(Succeed())
				extraOn := &corev1.ConfigMap{}
				err := memberClient(m).Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "extra"}, extraOn)
				if m == "member-4" {
					g.Expect(err).To(HaveOccurred(), "the Delete override keeps extra off %s", m)
					g.Expect(nsOn.Labels).NotTo(HaveKey("cluster"))
					continue
				}
				g.Expect(err).NotTo(HaveOccurred(), "extra on %s", m)
				if m == "member-1" || m == "member-2" {
					g.Expect(nsOn.Labels).To(HaveKeyWithValue("cluster", m))
					g.Expect(extraOn.Labels).To(HaveKeyWithValue("cluster", m), "the ClusterResourceOverride alone patches extra on %s", m)
				} else {
					g.Expect(nsOn.Labels).NotTo(HaveKey("cluster"))
					g.Expect(extraOn.Labels).NotTo(HaveKey("cluster"))
				}
			}
		}).Should(Succeed())

		By("the hub's own copy is untouched")
		hubSettings := &corev1.ConfigMap{}
		Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, hubSettings)).To(Succeed())
		Expect(hubSettings.Data).To(Equal(map[string]string{"color": "blue"}))
		Expect(hubSettings.Labels).To(Equal(map[string]string{"app": "demo"}))

		By("deleting the Delete override places the ConfigMap on the staging cluster too")
		Expect(t.Client.Delete(framework.Ctx(), extra)).To(Succeed())
		Eventually(func(g Gomega) {
			expectOverridden(g, t.getCRP(g, "app"), map[string]applied{
				"member-1": {cro: []string{"by-env-0"}, ro: roSettings}, "member-2": {cro: []string{"by-env-0"}, ro: roSettings},
				"member-3": {ro: roSettings}, "member-4": {ro: roSettings},
			})
			configMapOn(g, "member-4", ns, "extra")
			snaps := &placementv1beta1.ResourceOverrideSnapshotList{}
			g.Expect(t.Client.List(framework.Ctx(), snaps, client.InNamespace(ns), client.MatchingLabels{placementv1beta1.OverrideTrackingLabel: "extra"})).To(Succeed())
			g.Expect(snaps.Items).To(BeEmpty(), "the deleted override's snapshots are gone")
		}).Should(Succeed())
	})

	It("roll out through the placement's strategy: a bad override stops at one cluster with maxUnavailable 1, a fixed one reaches all", func() {
		t := newTeam("override-rollout")
		ns := framework.UniqueName("web")
		t.Create(framework.Ctx(), framework.Namespace(ns), deployment(ns, "web", "nginx:1.27"))
		crp := newCRP("web", pickAll(placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "canary"}}},
		}}), namespaceSelector(ns))
		crp.Spec.Strategy = placementv1beta1.RolloutStrategy{
			Type:          placementv1beta1.RollingUpdateRolloutStrategyType,
			RollingUpdate: &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))},
		}
		t.place(crp)
		targets := []string{"member-1", "member-2", "member-3"}
		selected := []placementv1beta1.ResourceIdentifier{namespaceID(ns), deploymentID(ns, "web")}
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web"), targets, selected, "0")
		}).Should(Succeed())

		By("an override that asks for a node no member has")
		ro := resourceOverride(ns, "web", []placementv1beta1.ResourceSelector{{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"}},
			patchRule(onClusters(nil), jsonPatch("add", "/spec/template/spec/nodeSelector", map[string]string{"fleetplane.io/no-such-node": "true"})))
		t.Create(framework.Ctx(), ro)
		stuck := func(g Gomega) {
			var overridden []string
			for cluster, b := range t.activeBindings(g, "web") {
				d := deploymentOn(g, cluster, ns, "web")
				if len(b.Spec.ResourceOverrideSnapshots) > 0 {
					g.Expect(b.Spec.ResourceOverrideSnapshots).To(Equal([]placementv1beta1.NamespacedName{{Namespace: ns, Name: "web-0"}}))
					g.Expect(d.Spec.Template.Spec.NodeSelector).To(HaveKey("fleetplane.io/no-such-node"), "on %s", cluster)
					overridden = append(overridden, cluster)
					continue
				}
				g.Expect(d.Spec.Template.Spec.NodeSelector).To(BeEmpty(), "the old version stays on %s", cluster)
			}
			g.Expect(overridden).To(HaveLen(1), "exactly one cluster gets the override")
			crp := t.getCRP(g, "web")
			g.Expect(crp.Status.ObservedResourceIndex).To(Equal("0"), "an override change is no new resource snapshot")
			started := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementRolloutStartedConditionType))
			g.Expect(started.Status).To(Equal(metav1.ConditionFalse), "%+v", started)
		}
		Eventually(stuck).Should(Succeed())
		Consistently(stuck, "5s", "500ms").Should(Succeed())

		By("fixing the override")
		update(t.Client, ro, func(ro *placementv1beta1.ResourceOverride) {
			ro.Spec.Policy.OverrideRules = []placementv1beta1.OverrideRule{
				patchRule(onClusters(nil), jsonPatch("add", "/spec/template/metadata/labels/cluster", "${MEMBER-CLUSTER-NAME}")),
			}
		})
		Eventually(func(g Gomega) {
			want := map[string]applied{}
			for _, m := range targets {
				want[m] = applied{ro: []placementv1beta1.NamespacedName{{Namespace: ns, Name: "web-1"}}}
				d := deploymentOn(g, m, ns, "web")
				g.Expect(d.Spec.Template.Spec.NodeSelector).To(BeEmpty(), "on %s", m)
				g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("cluster", m))
				g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1), "available replicas on %s", m)
			}
			expectOverridden(g, t.getCRP(g, "web"), want)
		}).Should(Succeed())

		By("deleting the override rolls it back everywhere")
		Expect(t.Client.Delete(framework.Ctx(), ro)).To(Succeed())
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web"), targets, selected, "0")
			for _, m := range targets {
				g.Expect(deploymentOn(g, m, ns, "web").Spec.Template.Labels).NotTo(HaveKey("cluster"), "on %s", m)
			}
		}).Should(Succeed())
	})

	It("that break a rule the schema cannot check get no snapshot and a Warning event; a failing patch is reported on the placement", func() {
		t := newTeam("override-invalid")
		ns, _ := t.appNamespace("app")
		first := resourceOverride(ns, "first", []placementv1beta1.ResourceSelector{selectConfigMap("settings")},
			patchRule(onClusters(nil), jsonPatch("add", "/data/first", "yes")))
		t.Create(framework.Ctx(), first)
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "first-0"}, &placementv1beta1.ResourceOverrideSnapshot{})).To(Succeed())
		}).Should(Succeed())
		second := resourceOverride(ns, "second", []placementv1beta1.ResourceSelector{selectConfigMap("settings")},
			patchRule(onClusters(nil), jsonPatch("remove", "/data/team", "a value")))
		t.Create(framework.Ctx(), second)
		Eventually(func(g Gomega) {
			g.Expect(invalidOverrideEvents(g, t, ns, "second")).To(ContainElement(ContainSubstring("a remove operation takes no value")))
		}).Should(Succeed())

		By("once its value is gone, it still selects what an older override selects")
		update(t.Client, second, func(ro *placementv1beta1.ResourceOverride) {
			ro.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Value = apiextensionsv1.JSON{}
		})
		Eventually(func(g Gomega) {
			g.Expect(invalidOverrideEvents(g, t, ns, "second")).To(ContainElement(ContainSubstring("ResourceOverride second selects v1 ConfigMap settings, which ResourceOverride first already selects")))
		}).Should(Succeed())
		snaps := &placementv1beta1.ResourceOverrideSnapshotList{}
		Expect(t.Client.List(framework.Ctx(), snaps, client.InNamespace(ns), client.MatchingLabels{placementv1beta1.OverrideTrackingLabel: "second"})).To(Succeed())
		Expect(snaps.Items).To(BeEmpty())

		By("a patch that cannot apply fails the placement's Overridden condition, naming the override, rule and path")
		update(t.Client, first, func(ro *placementv1beta1.ResourceOverride) {
			ro.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0] = jsonPatch("replace", "/data/missing", "x")
		})
		t.place(newCRP("app", pickFixed("member-1"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			c := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementOverriddenConditionType))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "%+v", c)
			g.Expect(c.Reason).To(Equal(placementv1beta1.OverriddenFailedReason))
			g.Expect(crp.Status.PerClusterPlacementStatuses).To(HaveLen(1))
			pc := framework.Condition(crp.Status.PerClusterPlacementStatuses[0].Conditions, string(placementv1beta1.PerClusterOverriddenConditionType))
			g.Expect(pc.Reason).To(Equal(placementv1beta1.OverriddenFailedReason))
			g.Expect(pc.Message).To(ContainSubstring(fmt.Sprintf("ResourceOverride %s/first (snapshot first-1) on v1 ConfigMap %s/settings: overrideRules[0].jsonPatchOverrides[0] (replace /data/missing)", ns, ns)))
		}).Should(Succeed())
	})
})
