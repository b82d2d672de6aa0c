package placement

import (
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("Resource selection", func() {
	It("with NamespaceWithResourceSelectors places the namespace and only the selected objects in it", func() {
		t := newTeam("scoped")
		ns := framework.UniqueName("scoped")
		web := framework.ConfigMap(ns, "web", map[string]string{"k": "v"})
		web.Labels = map[string]string{"tier": "web"}
		t.Create(framework.Ctx(), framework.Namespace(ns), web, framework.ConfigMap(ns, "db", map[string]string{"k": "v"}))
		nsTerm := namespaceSelector(ns)
		nsTerm.SelectionScope = placementv1beta1.NamespaceWithResourceSelectors
		cmTerm := placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "ConfigMap",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}}
		t.place(newCRP("app", pickFixed("member-1"), nsTerm, cmTerm))

		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "web")}, "0")
			expectOnlyOn(g, framework.ConfigMap(ns, "web", nil), "member-1")
			expectOnlyOn(g, framework.ConfigMap(ns, "db", nil))
		}).Should(Succeed())
	})

	It("places cluster-scoped objects by name and by label from the platform workspace", func() {
		t := platform()
		byName, byLabel, other := framework.UniqueName("reader"), framework.UniqueName("labelled"), framework.UniqueName("other")
		labelled := clusterRole(byLabel)
		labelled.Labels = map[string]string{"placed": "yes"}
		t.Create(framework.Ctx(), clusterRole(byName), labelled, clusterRole(other))
		DeferCleanup(func() {
			for _, name := range []string{byName, byLabel, other} {
				Expect(client.IgnoreNotFound(t.Client.Delete(framework.Ctx(), clusterRole(name)))).To(Succeed())
			}
		})
		t.place(newCRP(framework.UniqueName("roles"), pickFixed("member-2"), rbacTerm(byName, nil), rbacTerm("", map[string]string{"placed": "yes"})))

		id := func(name string) placementv1beta1.ResourceIdentifier {
			return placementv1beta1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: name}
		}
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, t.placed[0]), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{id(byName), id(byLabel)}, "0")
			expectOnlyOn(g, clusterRole(byName), "member-2")
			expectOnlyOn(g, clusterRole(byLabel), "member-2")
			expectOnlyOn(g, clusterRole(other))
		}).Should(Succeed())
	})

	It("refuses cluster-scoped kinds other than Namespaces from a team workspace, and anything in a reserved namespace", func() {
		t := newTeam("cluster-scoped")
		role := framework.UniqueName("reader")
		t.Create(framework.Ctx(), clusterRole(role))
		t.place(newCRP("roles", pickFixed("member-2"), rbacTerm(role, nil)))
		rp := &placementv1beta1.ResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "in-default"},
			Spec: placementv1beta1.PlacementSpec{Policy: pickFixed("member-2"),
				ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "ConfigMap", Name: "settings"}}},
		}
		t.Create(framework.Ctx(), framework.ConfigMap("default", "settings", nil))
		t.place(rp)
		Eventually(func(g Gomega) {
			c := framework.Condition(t.getCRP(g, "roles").Status.Conditions, "ClusterResourcePlacementScheduled")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(placementv1beta1.InvalidResourceSelectorsReason))
			g.Expect(c.Message).To(ContainSubstring("ClusterRole " + role + " is cluster-scoped: a team workspace places only Namespaces"))
			got := &placementv1beta1.ResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(rp), got)).To(Succeed())
			c = framework.Condition(got.Status.Conditions, "ResourcePlacementScheduled")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(placementv1beta1.InvalidResourceSelectorsReason))
			g.Expect(c.Message).To(ContainSubstring("namespace default is reserved on member clusters, so a ResourcePlacement in it places nothing"))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectOnlyOn(g, clusterRole(role))
			expectOnlyOn(g, framework.ConfigMap("default", "settings", nil))
		}, "3s").Should(Succeed())
	})

	It("reports a namespaced kind selected without its namespace as invalid, and recovers once fixed", func() {
		t := newTeam("invalid")
		ns, selected := t.appNamespace("invalid")
		t.place(newCRP("app", pickFixed("member-1"), placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "ConfigMap"}))

		Eventually(func(g Gomega) {
			c := framework.Condition(t.getCRP(g, "app").Status.Conditions, "ClusterResourcePlacementScheduled")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(placementv1beta1.InvalidResourceSelectorsReason))
			g.Expect(c.Message).To(And(ContainSubstring("ConfigMap is namespaced"), ContainSubstring("ResourcePlacement")))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eventReasons(g, t, "app")).To(ContainElement(placementv1beta1.InvalidResourceSelectorsReason))
		}).Should(Succeed())

		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.ResourceSelectors = []placementv1beta1.ResourceSelectorTerm{namespaceSelector(ns)}
		})
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1"}, selected, "0")
		}).Should(Succeed())
	})

	It("sanitizes Services: members allocate their own IPs and ports, headless stays headless", func() {
		t := newTeam("services")
		ns := framework.UniqueName("services")
		port := corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}
		// An IP copied from another cluster would collide on the member.
		fixed := service(ns, "fixed", corev1.ServiceTypeClusterIP, port)
		fixed.Spec.ClusterIP = "10.0.0.1"
		headless := service(ns, "headless", corev1.ServiceTypeClusterIP, port)
		headless.Spec.ClusterIP = corev1.ClusterIPNone
		nodePort := port
		nodePort.NodePort = 31999
		exposed := service(ns, "exposed", corev1.ServiceTypeNodePort, nodePort)
		t.Create(framework.Ctx(), framework.Namespace(ns), fixed, headless, exposed)
		// The member already uses the node port the hub's copy names.
		mc := memberClient("member-3")
		taken := service("default", framework.UniqueName("taken"), corev1.ServiceTypeNodePort, nodePort)
		Expect(mc.Create(framework.Ctx(), taken)).To(Succeed())
		DeferCleanup(func() { Expect(mc.Delete(framework.Ctx(), taken)).To(Succeed()) })
		t.place(newCRP("services", pickFixed("member-3"), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			got := &corev1.Service{}
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "fixed"}, got)).To(Succeed())
			g.Expect(got.Spec.ClusterIP).NotTo(BeElementOf("", "10.0.0.1", corev1.ClusterIPNone))
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "headless"}, got)).To(Succeed())
			g.Expect(got.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "exposed"}, got)).To(Succeed())
			g.Expect(got.Spec.Ports).To(HaveLen(1))
			g.Expect(got.Spec.Ports[0].NodePort).NotTo(BeZero())
			g.Expect(got.Spec.Ports[0].NodePort).NotTo(Equal(nodePort.NodePort), "the member allocates the node port")
		}).Should(Succeed())
	})
})

var _ = Describe("Resource snapshots", func() {
	It("are taken only when the selected content changes, and no more than revisionHistoryLimit are kept", func() {
		t := newTeam("history")
		ns, selected := t.appNamespace("history")
		crp := newCRP("app", pickFixed("member-1"), namespaceSelector(ns))
		crp.Spec.RevisionHistoryLimit = ptr.To[int32](2)
		t.place(crp)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1"}, selected, "0")
		}).Should(Succeed())

		By("changing only what sanitizing drops")
		t.updateConfigMap(ns, "settings", func(cm *corev1.ConfigMap) {
			cm.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
		})
		Consistently(func(g Gomega) {
			g.Expect(t.resourceSnapshotIndexes(g, "app")).To(Equal([]int{0}))
		}).WithTimeout(3 * time.Second).Should(Succeed())

		By("changing the data three times")
		for i := 1; i <= 3; i++ {
			value := strconv.Itoa(i)
			t.updateConfigMap(ns, "settings", func(cm *corev1.ConfigMap) { cm.Data["rev"] = value })
			Eventually(func(g Gomega) {
				expectAvailable(g, t.getCRP(g, "app"), []string{"member-1"}, selected, value)
				got := &corev1.ConfigMap{}
				g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, got)).To(Succeed())
				g.Expect(got.Data).To(HaveKeyWithValue("rev", value))
			}).Should(Succeed())
		}
		Eventually(func(g Gomega) {
			g.Expect(t.resourceSnapshotIndexes(g, "app")).To(Equal([]int{2, 3}))
		}).Should(Succeed())
		latest := &placementv1beta1.ClusterResourceSnapshot{}
		Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "app-3-snapshot"}, latest)).To(Succeed())
		Expect(latest.Labels).To(HaveKeyWithValue(placementv1beta1.IsLatestSnapshotLabel, "true"))
	})
})

var _ = Describe("statusReportingScope NamespaceAccessible", func() {
	It("copies the placement's status into a ClusterResourcePlacementStatus in the selected namespace", func() {
		t := newTeam("ns-status")
		ns, selected := t.appNamespace("ns-status")
		crp := newCRP("app", pickFixed("member-2"), namespaceSelector(ns))
		crp.Spec.StatusReportingScope = placementv1beta1.NamespaceAccessible
		t.place(crp)

		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			expectAvailable(g, crp, []string{"member-2"}, selected, "0")
			synced := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementStatusSyncedConditionType))
			g.Expect(synced.Status).To(Equal(metav1.ConditionTrue), "%+v", synced)
			crps := &placementv1beta1.ClusterResourcePlacementStatus{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "app"}, crps)).To(Succeed())
			g.Expect(crps.PlacementStatus.SelectedResources).To(ConsistOf(selected))
			g.Expect(crps.PlacementStatus.ObservedResourceIndex).To(Equal("0"))
			g.Expect(framework.Condition(crps.PlacementStatus.Conditions, "ClusterResourcePlacementAvailable").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(crps.PlacementStatus.PerClusterPlacementStatuses).To(HaveLen(1))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eventReasons(g, t, "app")).To(ContainElements("PlacementRolloutStarted", "PlacementAvailable", "PlacementRolloutCompleted"))
		}).Should(Succeed())
	})
})

func rbacTerm(name string, labels map[string]string) placementv1beta1.ResourceSelectorTerm {
	term := placementv1beta1.ResourceSelectorTerm{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: name}
	if labels != nil {
		term.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	}
	return term
}

func clusterRole(name string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
}

func service(ns, name string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}, Ports: ports},
	}
}

func (t *team) updateConfigMap(ns, name string, change func(*corev1.ConfigMap)) {
	update(t.Client, framework.ConfigMap(ns, name, nil), change)
}

// resourceSnapshotIndexes lists the indexes of a placement's resource
// snapshot groups, ascending.
func (t *team) resourceSnapshotIndexes(g Gomega, crp string) []int {
	list := &placementv1beta1.ClusterResourceSnapshotList{}
	g.ExpectWithOffset(1, t.Client.List(framework.Ctx(), list, client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: crp})).To(Succeed())
	var out []int
	for _, s := range list.Items {
		idx, err := strconv.Atoi(s.Labels[placementv1beta1.ResourceIndexLabel])
		g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
		out = append(out, idx)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// eventReasons lists the reasons of the events recorded for a placement in
// the team's workspace.
func eventReasons(g Gomega, t *team, placement string) []string {
	events := &corev1.EventList{}
	g.ExpectWithOffset(1, t.Client.List(framework.Ctx(), events)).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.InvolvedObject.Name == placement && e.InvolvedObject.Kind == "ClusterResourcePlacement" {
			out = append(out, e.Reason)
		}
	}
	return out
}
