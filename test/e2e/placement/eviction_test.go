package placement

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

func eviction(name, placement, cluster string) *placementv1beta1.ClusterResourcePlacementEviction {
	return &placementv1beta1.ClusterResourcePlacementEviction{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementEvictionSpec{PlacementName: placement, ClusterName: cluster}}
}

// expectEviction waits for an eviction's verdict: Valid, then Executed (or
// not) with KubeFleet's reason and message.
func (t *team) expectEviction(name string, valid bool, executed *bool, message string) {
	EventuallyWithOffset(1, func(g Gomega) {
		e := &placementv1beta1.ClusterResourcePlacementEviction{}
		g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: name}, e)).To(Succeed())
		v := framework.Condition(e.Status.Conditions, placementv1beta1.PlacementEvictionConditionTypeValid)
		x := framework.Condition(e.Status.Conditions, placementv1beta1.PlacementEvictionConditionTypeExecuted)
		if !valid {
			g.Expect(v.Status).To(Equal(metav1.ConditionFalse), "%+v", e.Status.Conditions)
			g.Expect(v.Reason).To(Equal(placementv1beta1.ClusterResourcePlacementEvictionInvalidReason))
			g.Expect(v.Message).To(Equal(message))
			g.Expect(x.Reason).To(Equal("(absent)"))
			return
		}
		g.Expect(v.Reason).To(Equal(placementv1beta1.ClusterResourcePlacementEvictionValidReason), "%+v", e.Status.Conditions)
		reason, status := placementv1beta1.ClusterResourcePlacementEvictionNotExecutedReason, metav1.ConditionFalse
		if *executed {
			reason, status = placementv1beta1.ClusterResourcePlacementEvictionExecutedReason, metav1.ConditionTrue
		}
		g.Expect(x.Status).To(Equal(status), "%+v", x)
		g.Expect(x.Reason).To(Equal(reason))
		g.Expect(x.Message).To(Equal(message))
	}).Should(Succeed())
}

// placeOnProd places a namespace on the prod clusters (members 1 and 2)
// and waits until it is available on both, so that evicting from one is a
// disruption a budget counts.
func (t *team) placeOnProd(name, ns string) {
	t.place(newCRP(name, pickAll(labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns)))
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(keys(t.activeBindings(g, name))).To(ConsistOf("member-1", "member-2"))
		for _, b := range t.activeBindings(g, name) {
			g.Expect(framework.Condition(b.Status.Conditions, string(placementv1beta1.ResourceBindingAvailable)).Status).To(Equal(metav1.ConditionTrue))
		}
	}).Should(Succeed())
}

var _ = Describe("Evictions and disruption budgets", func() {
	It("refuse PickFixed placements and unknown placements or clusters, as terminal verdicts", func() {
		t := newTeam("evict-invalid")
		ns, _ := t.appNamespace("app")
		t.place(newCRP("fixed", pickFixed("member-1"), namespaceSelector(ns)))
		t.place(newCRP("all", pickAll(labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns+"-none")))
		t.Create(framework.Ctx(), eviction("fixed", "fixed", "member-1"), eviction("missing", "nope", "member-1"), eviction("elsewhere", "all", "member-4"))
		t.expectEviction("fixed", false, nil, "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction")
		t.expectEviction("missing", false, nil, "Failed to find ClusterResourcePlacement targeted by eviction")
		t.expectEviction("elsewhere", false, nil, "Failed to find scheduler decision for placement in cluster targeted by eviction")
		Eventually(func(g Gomega) {
			g.Expect(keys(t.activeBindings(g, "fixed"))).To(ConsistOf("member-1"), "the PickFixed placement keeps its cluster")
		}).Should(Succeed())
	})

	It("evict a PickN placement from one cluster within its budget: blocked, then allowed, and the scheduler replaces the cluster", func() {
		t := newTeam("evict-pickn")
		ns, selected := t.appNamespace("app")
		t.place(newCRP("app", pickN(2), namespaceSelector(ns)))
		var picked []string
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			picked = selectedClusters(t.decisions(g, "app"))
			g.Expect(picked).To(HaveLen(2))
			expectAvailable(g, crp, picked, selected, "0")
		}).Should(Succeed())
		t.Create(framework.Ctx(), &placementv1beta1.ClusterResourcePlacementDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "app"},
			Spec: placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("100%"))}})

		By("minAvailable 100% blocks the eviction, and the verdict is final")
		t.Create(framework.Ctx(), eviction("first", "app", picked[0]))
		t.expectEviction("first", true, ptr.To(false), "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 2, totalPlacements: 2")
		Consistently(func(g Gomega) {
			g.Expect(keys(t.activeBindings(g, "app"))).To(ConsistOf(picked))
		}, "2s").Should(Succeed())

		By("with maxUnavailable 1 a new eviction is executed; the scheduler picks another cluster")
		update(t.Client, &placementv1beta1.ClusterResourcePlacementDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "app"}},
			func(b *placementv1beta1.ClusterResourcePlacementDisruptionBudget) {
				b.Spec = placementv1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
			})
		t.Create(framework.Ctx(), eviction("second", "app", picked[0]))
		t.expectEviction("second", true, ptr.To(true), "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 2, totalPlacements: 2")
		Eventually(func(g Gomega) {
			now := selectedClusters(t.decisions(g, "app"))
			g.Expect(now).To(HaveLen(2))
			g.Expect(now).To(ContainElement(picked[1]), "the other cluster stays")
			expectAvailable(g, t.getCRP(g, "app"), now, selected, "0")
		}).Should(Succeed())
	})

	It("evict without a budget at once", func() {
		t := newTeam("evict-nobudget")
		ns, _ := t.appNamespace("app")
		t.placeOnProd("app", ns)
		t.Create(framework.Ctx(), eviction("now", "app", "member-2"))
		t.expectEviction("now", true, ptr.To(true), placementv1beta1.EvictionAllowedNoPDBMessage)
	})
})
