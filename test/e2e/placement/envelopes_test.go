package placement

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

func enveloped(obj client.Object) placementv1beta1.EnvelopedObject {
	return placementv1beta1.EnvelopedObject{RawExtension: runtime.RawExtension{Raw: mustJSON(obj)}}
}

func envelopeID(kind, ns, name string) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Group: placementv1beta1.GroupVersion.Group, Version: "v1beta1", Kind: kind, Namespace: ns, Name: name}
}

var _ = Describe("Envelopes", func() {
	It("carry a webhook configuration and a ClusterRole to the members, never creating them on the hub", func() {
		t := platform()
		name := framework.UniqueName("hooks")
		webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
		}
		role := &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		}
		env := &placementv1beta1.ClusterResourceEnvelope{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Data:       map[string]placementv1beta1.EnvelopedObject{"webhook.yaml": enveloped(webhook), "role.yaml": enveloped(role)},
		}
		// A platform ClusterResourceOverride reaches into the envelope.
		cro := &placementv1beta1.ClusterResourceOverride{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: placementv1beta1.ClusterResourceOverrideSpec{
				Placement:                &placementv1beta1.PlacementRef{Name: name},
				ClusterResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: name}},
				Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{
					patchRule(onClusters(map[string]string{"env": "prod"}), jsonPatch("add", "/metadata/labels", map[string]string{"cluster": "${MEMBER-CLUSTER-NAME}"})),
				}},
			},
		}
		t.Create(framework.Ctx(), env, cro)
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(t.Client.Delete(framework.Ctx(), env))).To(Succeed())
			Expect(client.IgnoreNotFound(t.Client.Delete(framework.Ctx(), cro))).To(Succeed())
		})
		crp := newCRP(name, pickFixed("member-1", "member-2"), placementv1beta1.ResourceSelectorTerm{
			Group: placementv1beta1.GroupVersion.Group, Version: "v1beta1", Kind: "ClusterResourceEnvelope", Name: name,
		})
		t.place(crp)

		Eventually(func(g Gomega) {
			crp := t.getCRP(g, name)
			g.Expect(crp.Status.SelectedResources).To(Equal([]placementv1beta1.ResourceIdentifier{envelopeID("ClusterResourceEnvelope", "", name)}))
			overridden := applied{cro: []string{name + "-0"}}
			expectOverridden(g, crp, map[string]applied{"member-1": overridden, "member-2": overridden})
			expectOnlyOn(g, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}, "member-1", "member-2")
			expectOnlyOn(g, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}, "member-1", "member-2")
			works := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), works, client.InNamespace("fleet-member-member-1"), client.MatchingLabels{
				placementv1beta1.EnvelopeNameLabel: name, placementv1beta1.EnvelopeTypeLabel: "ClusterResourceEnvelope",
			})).To(Succeed())
			g.Expect(works.Items).To(HaveLen(1), "one Work carries the envelope's objects")
			g.Expect(works.Items[0].Spec.Workload.Manifests).To(HaveLen(2))
			for _, m := range []string{"member-1", "member-2"} {
				got := &rbacv1.ClusterRole{}
				g.Expect(memberClient(m).Get(framework.Ctx(), client.ObjectKey{Name: name}, got)).To(Succeed())
				g.Expect(got.Labels).To(HaveKeyWithValue("cluster", m), "the override on %s", m)
			}
		}).Should(Succeed())
		for _, obj := range []client.Object{&admissionregistrationv1.ValidatingWebhookConfiguration{}, &rbacv1.ClusterRole{}} {
			err := t.Client.Get(framework.Ctx(), client.ObjectKey{Name: name}, obj)
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s must not exist on the hub: %v", obj, name, err)
		}

		By("deleting the placement removes them from the members")
		t.deletePlacement(crp)
		Eventually(func(g Gomega) {
			expectOnlyOn(g, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}})
			expectOnlyOn(g, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}).Should(Succeed())
	})

	It("of a team carry namespaced objects of their namespace, overridable, and a malformed one is named with its entry", func() {
		t := newTeam("envelopes")
		ns := framework.UniqueName("app")
		role := &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: "reader", Labels: map[string]string{"app": "demo"}},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		}
		// KubeFleet's former envelope is an ordinary ConfigMap, as in KubeFleet.
		quota := "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: pods\nspec:\n  hard:\n    pods: \"10\"\n"
		configMapEnvelope := framework.ConfigMap(ns, "quota-envelope", map[string]string{"quota.yaml": quota})
		configMapEnvelope.Annotations = map[string]string{placementv1beta1.EnvelopeConfigMapAnnotation: "true"}
		t.Create(framework.Ctx(), framework.Namespace(ns),
			&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac"}, Data: map[string]placementv1beta1.EnvelopedObject{"role.yaml": enveloped(role)}},
			configMapEnvelope,
			// The Role inside the envelope is overridden like any object.
			resourceOverride(ns, "reader", []placementv1beta1.ResourceSelector{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Name: "reader"}},
				patchRule(onClusters(nil), jsonPatch("add", "/metadata/labels/cluster", "${MEMBER-CLUSTER-NAME}"))),
		)
		t.place(newCRP("app", pickFixed("member-3"), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			g.Expect(crp.Status.SelectedResources).To(ConsistOf(namespaceID(ns), envelopeID("ResourceEnvelope", ns, "rbac"), configMapID(ns, "quota-envelope")))
			expectOverridden(g, crp, map[string]applied{"member-3": {ro: []placementv1beta1.NamespacedName{{Namespace: ns, Name: "reader-0"}}}})
			got := &rbacv1.Role{}
			g.Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "reader"}, got)).To(Succeed())
			g.Expect(got.Labels).To(HaveKeyWithValue("cluster", "member-3"))
			// The annotated ConfigMap is placed as it is, and nothing in it
			// is opened.
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "quota-envelope"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"quota.yaml": quota}))
			g.Expect(cm.Annotations).To(HaveKeyWithValue(placementv1beta1.EnvelopeConfigMapAnnotation, "true"))
			err := memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "pods"}, &corev1.ResourceQuota{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the annotated ConfigMap's content is not placed: %v", err)
		}).Should(Succeed())
		err := t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "reader"}, &rbacv1.Role{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Role must not exist in the team's workspace: %v", err)

		By("an envelope carrying an object of another namespace")
		bad := framework.UniqueName("bad")
		other := framework.ConfigMap("elsewhere", "x", nil)
		t.Create(framework.Ctx(), framework.Namespace(bad), &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: bad, Name: "wrong"},
			Data: map[string]placementv1beta1.EnvelopedObject{"cm.yaml": enveloped(other)}})
		t.place(newCRP("bad", pickFixed("member-3"), namespaceSelector(bad)))
		Eventually(func(g Gomega) {
			st := t.getCRP(g, "bad").Status
			g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(1))
			c := framework.Condition(st.PerClusterPlacementStatuses[0].Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "%+v%s", c, describeClusters(&st))
			g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf(`ResourceEnvelope %s/wrong, entry "cm.yaml": ConfigMap x is in namespace elsewhere`, bad)))
		}).Should(Succeed())
	})
})

var _ = Describe("An enveloped object with generateName and no name", func() {
	It("is reported by each member as FoundGenerateName, naming its envelope, and the placement's other objects are applied, as in KubeFleet", func() {
		t := newTeam("generate")
		ns := framework.UniqueName("app")
		generated := framework.ConfigMap(ns, "", map[string]string{"k": "v"})
		generated.GenerateName = "gen-"
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}),
			&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"},
				Data: map[string]placementv1beta1.EnvelopedObject{"generated.yaml": enveloped(generated), "named.yaml": enveloped(framework.ConfigMap(ns, "named", nil))}})
		t.place(newCRP("app", pickFixed("member-3"), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			st := crp.Status
			pcs := clusterStatus(g, crp, "member-3")
			synced := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
			g.Expect(synced.Status).To(Equal(metav1.ConditionTrue), "%+v%s", synced, describeClusters(&st))
			g.Expect(pcs.FailedPlacements).To(HaveLen(1), "%+v", pcs.FailedPlacements)
			failed := pcs.FailedPlacements[0]
			g.Expect(failed.ResourceIdentifier).To(Equal(placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: ns,
				Envelope: &placementv1beta1.EnvelopeIdentifier{Name: "jobs", Namespace: ns, Type: placementv1beta1.ResourceEnvelopeType}}))
			g.Expect(failed.Condition.Reason).To(Equal(placementv1beta1.ApplyResultFoundGenerateName))
			configMapOn(g, "member-3", ns, "settings")
			configMapOn(g, "member-3", ns, "named")
		}).Should(Succeed())
	})
})

var _ = Describe("A ResourceEnvelope carrying a cluster-scoped object", func() {
	It("is not synchronized in the fleet's workspace either, naming the envelope and its entry, and nothing of the placement is applied, as in KubeFleet", func() {
		p := platform()
		ns := framework.UniqueName("app")
		role := &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-reader"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		}
		p.createNamespace(ns, framework.ConfigMap(ns, "settings", nil),
			&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac"},
				Data: map[string]placementv1beta1.EnvelopedObject{"role.yaml": enveloped(role)}})
		name := framework.UniqueName("rbac")
		p.place(newCRP(name, pickFixed("member-1", "member-2"), namespaceSelector(ns)))

		want := fmt.Sprintf(`ResourceEnvelope %s/rbac, entry "role.yaml": ClusterRole %s is cluster-scoped: a ResourceEnvelope carries namespaced objects only`, ns, role.Name)
		Eventually(func(g Gomega) {
			st := p.getCRP(g, name).Status
			g.Expect(framework.Condition(st.Conditions, string(placementv1beta1.ClusterResourcePlacementWorkSynchronizedConditionType)).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(2))
			for _, pcs := range st.PerClusterPlacementStatuses {
				synced := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
				g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%s: %+v", pcs.ClusterName, synced)
				g.Expect(synced.Message).To(ContainSubstring(want))
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectOnlyOn(g, framework.Namespace(ns))
			expectOnlyOn(g, role)
		}, "3s", "500ms").Should(Succeed())
	})
})
