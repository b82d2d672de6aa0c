package members

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// gizmoCRD is a kind no other spec places, so that the member API server's
// count of its watches tells what the syncer watches.
func gizmoCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.watch.fleetplane.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "watch.fleetplane.test",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

func gizmo(name string) map[string]any {
	return map[string]any{"apiVersion": "watch.fleetplane.test/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name, "namespace": "default"}}
}

var _ = Describe("The syncer's watches on its member", func() {
	It("watch a kind only while some Work places it", func() {
		m := members.Named("member-3")
		fc, mc := fleetClient(), framework.MemberClient(m, scheme)
		cfg := m.Cluster.Config()
		httpClient, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		// The member's controller manager watches every kind as well (its
		// garbage collector): count from once it does.
		gizmoWatches := func() float64 {
			ms, err := localfleet.ScrapeWith(httpClient, strings.TrimSuffix(cfg.Host, "/")+"/metrics")
			Expect(err).NotTo(HaveOccurred())
			n, _ := ms.Sum("apiserver_longrunning_requests", map[string]string{"verb": "WATCH", "group": "watch.fleetplane.test", "resource": "gizmos"})
			return n
		}
		syncerKinds := func() float64 {
			ms, err := localfleet.Scrape(m.MetricsURL())
			Expect(err).NotTo(HaveOccurred())
			n, _ := ms.Sum("fleet_syncer_watched_kinds", map[string]string{"member": m.Name})
			return n
		}

		By("placing the kind's CRD, but no object of the kind")
		work := newWork(m.Name, "gizmo-kinds", gizmoCRD(), framework.ConfigMap("default", "gizmo-settings", nil))
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), work))).To(Succeed()) })
		Eventually(func(g Gomega) { workAvailableNow(g, work) }, timeout, interval).Should(Succeed())
		var others, kinds float64
		Eventually(func(g Gomega) {
			others, kinds = gizmoWatches(), syncerKinds()
			g.Expect(others).To(BeNumerically(">=", 1), "the garbage collector watches the new kind")
			time.Sleep(3 * time.Second)
			g.Expect(gizmoWatches()).To(Equal(others))
			g.Expect(syncerKinds()).To(Equal(kinds))
		}, timeout, interval).Should(Succeed())

		By("placing an object of the kind: the syncer watches it")
		setManifests(work, gizmoCRD(), framework.ConfigMap("default", "gizmo-settings", nil), gizmo("first"))
		Eventually(func(g Gomega) { workAvailableNow(g, work) }, timeout, interval).Should(Succeed())
		Eventually(gizmoWatches, timeout, interval).Should(Equal(others + 1))
		Expect(syncerKinds()).To(Equal(kinds + 1))

		By("removing the object from the Work: the watch stops")
		setManifests(work, gizmoCRD(), framework.ConfigMap("default", "gizmo-settings", nil))
		Eventually(gizmoWatches, timeout, interval).Should(Equal(others))
		Expect(syncerKinds()).To(Equal(kinds))

		By("another Work placing the kind, then deleted: the watch stops again")
		second := newWork(m.Name, "gizmo-object", gizmo("second"))
		Expect(fc.Create(framework.Ctx(), second)).To(Succeed())
		Eventually(gizmoWatches, timeout, interval).Should(Equal(others + 1))
		Expect(fc.Delete(framework.Ctx(), second)).To(Succeed())
		Eventually(gizmoWatches, timeout, interval).Should(Equal(others))
		Eventually(syncerKinds, timeout, interval).Should(Equal(kinds))
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "default", Name: "gizmo-settings"}, framework.ConfigMap("", "", nil))).To(Succeed())
	})
})

var _ = Describe("The syncer's member cache", func() {
	It("holds the objects placements put on the member, not all the member has of their kinds", func() {
		m := members.Named("member-3")
		fc, mc := fleetClient(), framework.MemberClient(m, scheme)
		watched := func() float64 {
			ms, err := localfleet.Scrape(m.MetricsURL())
			Expect(err).NotTo(HaveOccurred())
			n, _ := ms.Sum("fleet_syncer_watched_objects", map[string]string{"member": m.Name, "kind": "ConfigMap"})
			return n
		}

		By("50 ConfigMaps the member's own admin made")
		ns := framework.Namespace("local-settings")
		Expect(mc.Create(framework.Ctx(), ns)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(mc.Delete(framework.Ctx(), ns))).To(Succeed()) })
		for i := range 50 {
			Expect(mc.Create(framework.Ctx(), framework.ConfigMap(ns.Name, fmt.Sprintf("local-%d", i), map[string]string{"k": "v"}))).To(Succeed())
		}

		By("a Work placing two ConfigMaps: the syncer holds the ConfigMaps placements manage, and no other")
		work := newWork(m.Name, "cached-objects", framework.ConfigMap("default", "cached-a", nil), framework.ConfigMap("default", "cached-b", nil))
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), work))).To(Succeed()) })
		Eventually(func(g Gomega) { workAvailableNow(g, work) }, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			placed, all := &corev1.ConfigMapList{}, &corev1.ConfigMapList{}
			g.Expect(mc.List(framework.Ctx(), placed, client.MatchingLabels{placementv1beta1.PlacedLabel: "true"})).To(Succeed())
			g.Expect(mc.List(framework.Ctx(), all)).To(Succeed())
			g.Expect(len(placed.Items)).To(BeNumerically(">=", 2))
			g.Expect(watched()).To(BeNumerically("==", len(placed.Items)))
			g.Expect(len(all.Items)).To(BeNumerically(">=", len(placed.Items)+50))
		}, timeout, interval).Should(Succeed())

		By("the label taken off on the member: the syncer puts it back")
		cm := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "default", Name: "cached-a"}, cm)).To(Succeed())
		delete(cm.Labels, placementv1beta1.PlacedLabel)
		Expect(mc.Update(framework.Ctx(), cm)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Labels).To(HaveKeyWithValue(placementv1beta1.PlacedLabel, "true"))
		}, timeout, interval).Should(Succeed())
	})
})

// workAvailableNow checks that the syncer reported the Work's current
// generation available.
func workAvailableNow(g Gomega, w *placementv1beta1.Work) {
	got := &placementv1beta1.Work{}
	g.Expect(fleetClient().Get(framework.Ctx(), client.ObjectKeyFromObject(w), got)).To(Succeed())
	c := framework.Condition(got.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%+v", c)
	g.Expect(c.ObservedGeneration).To(Equal(got.Generation), "%+v", c)
}

// setManifests replaces the Work's manifests with objs.
func setManifests(w *placementv1beta1.Work, objs ...any) {
	manifests := newWork("", "", objs...).Spec.Workload.Manifests
	Eventually(func(g Gomega) {
		g.Expect(fleetClient().Get(framework.Ctx(), client.ObjectKeyFromObject(w), w)).To(Succeed())
		w.Spec.Workload.Manifests = manifests
		g.Expect(fleetClient().Update(framework.Ctx(), w)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}
