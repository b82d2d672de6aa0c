package placement

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("Custom resources a team defines in its workspace", func() {
	It("are placed with their CRD, and their changes are followed", func() {
		t := newTeam("crd")
		group := framework.UniqueName("widgets") + ".example.com"
		crd := widgetCRD(group)
		t.Create(framework.Ctx(), crd)
		Eventually(func(g Gomega) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(crd), got)).To(Succeed())
			g.Expect(apihelpers.IsCRDConditionTrue(got, apiextensionsv1.Established)).To(BeTrue())
		}).Should(Succeed())
		ns := framework.UniqueName("widgets")
		t.Create(framework.Ctx(), framework.Namespace(ns))
		t.Create(framework.Ctx(), widget(group, ns, "small", 1))

		DeferCleanup(func() {
			// Runs after the placement is deleted: the CRD goes with it.
			Eventually(func(g Gomega) {
				expectGoneFrom(g, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name}}, "member-1")
			}).Should(Succeed())
		})
		crdTerm := placementv1beta1.ResourceSelectorTerm{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.Name}
		t.place(newCRP("widgets", pickFixed("member-1"), crdTerm, namespaceSelector(ns)))
		selected := []placementv1beta1.ResourceIdentifier{
			{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.Name},
			namespaceID(ns),
			{Group: group, Version: "v1", Kind: "Widget", Namespace: ns, Name: "small"},
		}
		By("placing a CRD from a team workspace that no grant allows CRDs")
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "widgets")
			g.Expect(crp.Status.PerClusterPlacementStatuses).To(HaveLen(1))
			synced := framework.Condition(crp.Status.PerClusterPlacementStatuses[0].Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
			g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(synced.Message).To(ContainSubstring("on member cluster member-1: CustomResourceDefinition " + crd.Name + ": no ClusterGrant"))
			g.Expect(synced.Message).To(ContainSubstring("allowCustomResourceDefinitions"))
		}).Should(Succeed())
		Consistently(func(g Gomega) { expectOnlyOn(g, framework.Namespace(ns)) }, "2s").Should(Succeed())

		By("a platform admin allowing the team CRDs")
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("crds")},
			Spec:       tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, AllowCustomResourceDefinitions: true},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })
		Eventually(func(g Gomega) {
			expectAvailableUntrackable(g, t.getCRP(g, "widgets"), []string{"member-1"}, selected, "0")
			g.Expect(memberWidgetSize(g, group, ns, "small")).To(BeEquivalentTo(1))
		}).Should(Succeed())

		By("changing the custom resource in the workspace")
		update(t.Client, widget(group, ns, "small", 0), func(w *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(w.Object, int64(2), "spec", "size")).To(Succeed())
		})
		Eventually(func(g Gomega) {
			expectAvailableUntrackable(g, t.getCRP(g, "widgets"), []string{"member-1"}, selected, "1")
			g.Expect(memberWidgetSize(g, group, ns, "small")).To(BeEquivalentTo(2))
		}).Should(Succeed())

		By("adding another one")
		t.Create(framework.Ctx(), widget(group, ns, "large", 3))
		selected = append(selected, placementv1beta1.ResourceIdentifier{Group: group, Version: "v1", Kind: "Widget", Namespace: ns, Name: "large"})
		Eventually(func(g Gomega) {
			expectAvailableUntrackable(g, t.getCRP(g, "widgets"), []string{"member-1"}, selected, "2")
			g.Expect(memberWidgetSize(g, group, ns, "large")).To(BeEquivalentTo(3))
		}).Should(Succeed())
	})
})

var _ = Describe("A team's CRD in the placement API group", func() {
	It("is refused, and the hub keeps reading and writing the team's placements", func() {
		t := newTeam("crdclash")
		ns, selected := t.appNamespace("crdclash")
		t.place(newCRP("clash", pickFixed("member-1"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "clash"), []string{"member-1"}, selected, "0")
		}).Should(Succeed())

		By("the team defining a kind ClusterResourcePlacement of its own in placement.kubernetes-fleet.io/v1beta1")
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "hijacks.placement.kubernetes-fleet.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "placement.kubernetes-fleet.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "hijacks", Singular: "hijack",
					Kind: "ClusterResourcePlacement", ListKind: "HijackList"},
				Scope: apiextensionsv1.ClusterScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1beta1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true),
					}},
				}},
			},
		}
		t.Create(framework.Ctx(), crd)
		By("kcp refusing the kind, which the workspace's binding already serves")
		Eventually(func(g Gomega) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(crd), got)).To(Succeed())
			accepted := apihelpers.FindCRDCondition(got, apiextensionsv1.NamesAccepted)
			g.Expect(accepted).NotTo(BeNil())
			g.Expect(accepted.Status).To(Equal(apiextensionsv1.ConditionFalse))
			g.Expect(accepted.Reason).To(Equal("KindConflict"))
			g.Expect(apihelpers.IsCRDConditionTrue(got, apiextensionsv1.Established)).To(BeFalse())
		}).Should(Succeed())

		By("changing what the placement selects: the hub still writes the placement's status")
		t.updateConfigMap(ns, "settings", func(cm *corev1.ConfigMap) { cm.Data["color"] = "blue" })
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "clash"), []string{"member-1"}, selected, "1")
			g.Expect(configMapOn(g, "member-1", ns, "settings").Data).To(HaveKeyWithValue("color", "blue"))
		}).Should(Succeed())
	})
})

func widgetCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
}

func widget(group, ns, name string, size int64) *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"})
	w.SetNamespace(ns)
	w.SetName(name)
	w.Object["spec"] = map[string]any{"size": size}
	return w
}

func memberWidgetSize(g Gomega, group, ns, name string) int64 {
	w := widget(group, ns, name, 0)
	g.ExpectWithOffset(1, memberClient("member-1").Get(framework.Ctx(), client.ObjectKeyFromObject(w), w)).To(Succeed())
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	return size
}
