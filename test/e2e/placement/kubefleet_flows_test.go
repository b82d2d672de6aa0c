package placement

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// These specs follow flows of KubeFleet's own e2e suite (placement_pickall,
// placement_pickfixed, its cleanup between specs) and compare the status
// the way it does: every condition's type, status, reason and observed
// generation, and one entry per cluster with its conditions.

// kubeFleetWatch samples a placement's status while it changes, so that a
// spec can say what every status a client saw on the way looked like.
type kubeFleetWatch struct{ seen map[string]bool }

// sample notes the condition types of the placement's status, top-level
// and per cluster.
func (w *kubeFleetWatch) sample(p placementv1beta1.PlacementObj) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	st := p.GetPlacementStatus()
	for _, c := range st.Conditions {
		w.seen[c.Type] = true
	}
	for _, s := range st.PerClusterPlacementStatuses {
		for _, c := range s.Conditions {
			w.seen[c.Type] = true
		}
	}
}

// expectOnlyKubeFleetTypes checks that no sampled status had a condition
// type KubeFleet does not set.
func (w *kubeFleetWatch) expectOnlyKubeFleetTypes(prefix string) {
	known := map[string]bool{}
	for _, want := range placementConditions {
		known[prefix+want.suffix], known[want.suffix] = true, true
	}
	for t := range w.seen {
		Expect(known).To(HaveKey(t), "a status showed condition %s, which KubeFleet never sets", t)
	}
}

// perClusterExactly checks that each cluster's entry holds exactly
// KubeFleet's per-cluster conditions of a completed rollout.
func perClusterExactly(g Gomega, p placementv1beta1.PlacementObj) {
	for _, s := range p.GetPlacementStatus().PerClusterPlacementStatuses {
		expectExactly(g, s.Conditions, p.GetGeneration(), perClusterTrue)
	}
}

var _ = Describe("KubeFleet flows: PickFixed and PickAll while their clusters change", func() {
	DescribeTable("the status reads as KubeFleet's before, during and after the change",
		func(before *placementv1beta1.PlacementPolicy, beforeOn []string, change func(*placementv1beta1.ClusterResourcePlacement), afterOn []string) {
			t := newTeam("kf-switch")
			ns, selected := t.appNamespace("switch")
			t.place(newCRP("app", before, namespaceSelector(ns)))
			steady := func(on []string) func(Gomega) {
				return func(g Gomega) {
					crp := t.getCRP(g, "app")
					st := crp.Status
					g.Expect(st.ObservedResourceIndex).To(Equal("0"))
					g.Expect(st.SelectedResources).To(Equal(selected))
					expectOnlyOn(g, framework.Namespace(ns), on...)
					if len(on) == 0 {
						// As KubeFleet: only Scheduled, fulfilled, and no clusters.
						expectExactly(g, st.Conditions, crp.Generation, map[string]string{"ClusterResourcePlacementScheduled": fulfilled})
						g.Expect(st.PerClusterPlacementStatuses).To(BeEmpty())
						return
					}
					expectExactly(g, st.Conditions, crp.Generation, rolloutTrue("ClusterResourcePlacement", fulfilled))
					expectAvailable(g, crp, on, selected, "0")
					perClusterExactly(g, crp)
				}
			}
			Eventually(steady(beforeOn)).Should(Succeed())

			var watch kubeFleetWatch
			t.updateCRP("app", change)
			Eventually(func(g Gomega) {
				watch.sample(t.getCRP(g, "app"))
				steady(afterOn)(g)
			}).WithPolling(100 * time.Millisecond).Should(Succeed())
			Consistently(func(g Gomega) {
				watch.sample(t.getCRP(g, "app"))
				steady(afterOn)(g)
			}, 3*time.Second).Should(Succeed())
			watch.expectOnlyKubeFleetTypes("ClusterResourcePlacement")
		},
		Entry("PickFixed refreshing its target clusters", pickFixed("member-1"), []string{"member-1"},
			func(crp *placementv1beta1.ClusterResourcePlacement) {
				crp.Spec.Policy.ClusterNames = []string{"member-2"}
			}, []string{"member-2"}),
		Entry("PickFixed scaled from zero to one cluster", pickFixed(), nil,
			func(crp *placementv1beta1.ClusterResourcePlacement) {
				crp.Spec.Policy.ClusterNames = []string{"member-3"}
			}, []string{"member-3"}),
		Entry("PickAll with its label affinity updated", pickAll(labelTerm(map[string]string{"env": "prod"})), []string{"member-1", "member-2"},
			func(crp *placementv1beta1.ClusterResourcePlacement) {
				crp.Spec.Policy.Affinity = pickAll(labelTerm(map[string]string{"env": "canary"})).Affinity
			}, []string{"member-3"}),
		Entry("PickN scaled from zero to one cluster", pickNWhere(0, labelTerm(map[string]string{"env": "canary"})), nil,
			func(crp *placementv1beta1.ClusterResourcePlacement) {
				crp.Spec.Policy.NumberOfClusters = ptr.To[int32](1)
			}, []string{"member-3"}),
	)
})

var _ = Describe("KubeFleet flows: the next spec places the same namespace again", func() {
	It("finds what a deleted placement placed gone from its members, and places the namespace again under the same names", func() {
		t := newTeam("kf-reuse")
		ns, selected := t.appNamespace("reuse")
		prod := []string{"member-1", "member-2"}
		crp := newCRP("app", pickAll(labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns))
		t.place(crp)
		Eventually(func(g Gomega) { expectAvailable(g, t.getCRP(g, "app"), prod, selected, "0") }).Should(Succeed())

		By("deleting the placement and the namespace on the hub, as KubeFleet's suite cleans up after each spec")
		deleted := time.Now()
		t.deletePlacement(crp)
		Expect(t.Client.Delete(framework.Ctx(), framework.Namespace(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			expectGoneFrom(g, framework.Namespace(ns), prod...)
		}).Should(Succeed())
		AddReportEntry("a deleted placement's namespace was gone from its members after", time.Since(deleted).Round(100*time.Millisecond).String())

		By("creating the same namespace and placement again")
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Create(framework.Ctx(), framework.Namespace(ns))).To(Succeed())
		}).Should(Succeed(), "the hub's namespace %s is still being deleted", ns)
		t.Create(framework.Ctx(), framework.ConfigMap(ns, "settings", map[string]string{"team": t.Path}))
		t.place(newCRP("app", pickAll(labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			got := t.getCRP(g, "app")
			expectAvailable(g, got, prod, selected, "0")
			expectExactly(g, got.Status.Conditions, got.Generation, rolloutTrue("ClusterResourcePlacement", fulfilled))
			perClusterExactly(g, got)
			expectOnlyOn(g, framework.Namespace(ns), prod...)
		}).Should(Succeed())
	})
})
