package placement

import (
	"math"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

const notMatchingRequired = "cluster does not match with any of the required cluster affinity terms"

var _ = Describe("PickFixed", func() {
	It("places on the named clusters, and reports a name that is no member cluster", func() {
		t := newTeam("pickfixed")
		ns, selected := t.appNamespace("fixed")
		t.place(newCRP("app", pickFixed("member-1", "member-3"), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1", "member-3"}, selected, "0")
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-3")
			expectOnlyOn(g, framework.ConfigMap(ns, "settings", nil), "member-1", "member-3")
		}).Should(Succeed())
		cm := &corev1.ConfigMap{}
		Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"team": t.Path}))

		By("naming a cluster that does not exist as well")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy.ClusterNames = append(crp.Spec.Policy.ClusterNames, "member-9")
		})
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			scheduled := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementScheduledConditionType))
			g.Expect(scheduled.Status).To(Equal(metav1.ConditionFalse), "%+v", scheduled)
			g.Expect(scheduled.Reason).To(Equal(placementv1beta1.SchedulingPolicyUnfulfilledReason))
			g.Expect(scheduled.ObservedGeneration).To(Equal(crp.Generation))
			g.Expect(scheduled.Message).To(ContainSubstring(`"member-9" is not found`))

			// One slot per name: the two clusters keep what they have, the
			// third slot is empty and says why.
			g.Expect(crp.Status.PerClusterPlacementStatuses).To(HaveLen(3))
			var placed []string
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				if pcs.ClusterName == "" {
					c := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterScheduledConditionType))
					g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
					g.Expect(c.Reason).To(Equal(placementv1beta1.ScheduleFailedReason))
					continue
				}
				placed = append(placed, pcs.ClusterName)
				g.Expect(framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterAvailableConditionType)).Status).To(Equal(metav1.ConditionTrue))
			}
			g.Expect(placed).To(ConsistOf("member-1", "member-3"))

			snap := t.latestPolicySnapshot(g, "app")
			g.Expect(snap.Name).To(Equal("app-1"), "a new list of names is a new policy")
			decisions := t.decisions(g, "app")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-3"}))
			g.Expect(decisions).To(HaveKey("member-9"))
			g.Expect(decisions["member-9"].Reason).To(ContainSubstring("not found"))
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-3")
		}).Should(Succeed())
	})
})

var _ = Describe("PickAll", func() {
	It("with a required label affinity places on exactly the clusters with the label", func() {
		t := newTeam("pickall-label")
		ns, selected := t.appNamespace("prod-only")
		t.place(newCRP("app", pickAll(labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1", "member-2"}, selected, "0")
			decisions := t.decisions(g, "app")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-2"}))
			for _, other := range []string{"member-3", "member-4"} {
				g.Expect(decisions[other].Selected).To(BeFalse())
				g.Expect(decisions[other].Reason).To(Equal(notMatchingRequired), other)
			}
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-2")
			expectOnlyOn(g, framework.ConfigMap(ns, "settings", nil), "member-1", "member-2")
		}).Should(Succeed())
	})

	It("with a property selector places on the clusters whose node count is at least 2", func() {
		By("reading the node counts the syncers reported")
		Eventually(func(g Gomega) {
			for name, want := range map[string]string{"member-1": "3", "member-2": "2", "member-3": "1", "member-4": "2"} {
				g.Expect(framework.MemberCluster(g, fleetClient(), name).Status.Properties[clusterv1beta1.NodeCountProperty].Value).To(Equal(want), name)
			}
		}).Should(Succeed())

		t := newTeam("pickall-property")
		ns, selected := t.appNamespace("big")
		t.place(newCRP("app", pickAll(placementv1beta1.ClusterSelectorTerm{
			PropertySelector: &placementv1beta1.PropertySelector{MatchExpressions: []placementv1beta1.PropertySelectorRequirement{{
				Name: string(clusterv1beta1.NodeCountProperty), Operator: placementv1beta1.PropertySelectorGreaterThanOrEqualTo, Values: []string{"2"},
			}}},
		}), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1", "member-2", "member-4"}, selected, "0")
			decisions := t.decisions(g, "app")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-2", "member-4"}))
			g.Expect(decisions["member-3"].Reason).To(Equal(notMatchingRequired))
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-2", "member-4")
		}).Should(Succeed())
	})
})

var _ = Describe("PickN", func() {
	It("filters by the required affinity and prefers the clusters matching the preferred one", func() {
		// The shape of the seed's crp-pickn-01: only critical-allowed=true
		// clusters qualify (member-1, -2, -3) and critical-level=1 ones
		// (member-1, -2) are preferred. Without the preference the
		// lexicographically larger names would win the tie (member-3, -2);
		// without the requirement member-4 would be one of them.
		t := newTeam("pickn-affinity")
		ns, selected := t.appNamespace("critical")
		policy := pickN(2)
		policy.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
				labelTerm(map[string]string{"critical-allowed": "true"}),
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
				Weight: 20, Preference: labelTerm(map[string]string{"critical-level": "1"}),
			}},
		}}
		t.place(newCRP("app", policy, namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			expectAvailable(g, crp, []string{"member-1", "member-2"}, selected, "0")
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				g.Expect(framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterScheduledConditionType)).Message).To(ContainSubstring("affinity score: 20"))
			}
			decisions := t.decisions(g, "app")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-2"}), describeDecisions(decisions))
			for _, picked := range []string{"member-1", "member-2"} {
				g.Expect(ptr.Deref(decisions[picked].ClusterScore.AffinityScore, -1)).To(BeEquivalentTo(20), picked)
			}
			// Clusters not picked are listed with the reason by the cycle
			// that picked; a later cycle with nothing to pick lists only
			// the picked ones (as KubeFleet does).
			if d, ok := decisions["member-3"]; ok {
				g.Expect(d.Reason).To(Equal(`Cluster "member-3" does not score high enough (affinity score: 0, topology spread score: 0)`))
			}
			if d, ok := decisions["member-4"]; ok {
				g.Expect(d.Reason).To(Equal(notMatchingRequired))
			}
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-2")
		}).Should(Succeed())
	})

	It("ranks clusters by a property sorter on available CPU", func() {
		t := newTeam("pickn-sorter")
		sorted := func(order placementv1beta1.PropertySortOrder) *placementv1beta1.PlacementPolicy {
			policy := pickN(2)
			policy.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{{
					Weight: 100, Preference: placementv1beta1.ClusterSelectorTerm{PropertySorter: &placementv1beta1.PropertySorter{
						Name: string(clusterv1beta1.AvailableCPUCapacityProperty), SortOrder: order,
					}},
				}},
			}}
			return policy
		}
		mostNS, mostSelected := t.appNamespace("most-cpu")
		leastNS, leastSelected := t.appNamespace("least-cpu")
		t.place(newCRP("most-cpu", sorted(placementv1beta1.Descending), namespaceSelector(mostNS)))
		t.place(newCRP("least-cpu", sorted(placementv1beta1.Ascending), namespaceSelector(leastNS)))

		// The seed's formula, on the available CPU the syncers report
		// (16, 12, 4 and 2 CPUs: nothing in this suite requests CPU).
		available := map[string]float64{}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, m := range allMembers() {
			v := framework.MemberCluster(Default, fleetClient(), m).Status.ResourceUsage.Available.Cpu().AsApproximateFloat64()
			available[m] = v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		Expect(available).To(Equal(map[string]float64{"member-1": 12, "member-2": 16, "member-3": 2, "member-4": 4}))
		score := func(m string, order placementv1beta1.PropertySortOrder) int32 {
			f := (available[m] - lo) / (hi - lo)
			if order == placementv1beta1.Ascending {
				f = 1 - f
			}
			return int32(math.Round(100 * f))
		}

		for _, tc := range []struct {
			crp, ns  string
			order    placementv1beta1.PropertySortOrder
			selected []placementv1beta1.ResourceIdentifier
			picked   []string
		}{
			{"most-cpu", mostNS, placementv1beta1.Descending, mostSelected, []string{"member-1", "member-2"}},
			{"least-cpu", leastNS, placementv1beta1.Ascending, leastSelected, []string{"member-3", "member-4"}},
		} {
			By(string(tc.order))
			Eventually(func(g Gomega) {
				expectAvailable(g, t.getCRP(g, tc.crp), tc.picked, tc.selected, "0")
				decisions := t.decisions(g, tc.crp)
				g.Expect(selectedClusters(decisions)).To(Equal(tc.picked), describeDecisions(decisions))
				for _, m := range allMembers() {
					d, ok := decisions[m]
					if !ok && !slices.Contains(tc.picked, m) {
						continue // see the PickN affinity spec
					}
					g.Expect(d.ClusterScore).NotTo(BeNil(), m)
					g.Expect(ptr.Deref(d.ClusterScore.AffinityScore, -1)).To(Equal(score(m, tc.order)), "affinity score of %s%s", m, describeDecisions(decisions))
				}
				expectOnlyOn(g, framework.Namespace(tc.ns), tc.picked...)
			}).Should(Succeed())
		}
	})

	It("spreads over regions with a topology spread constraint", func() {
		t := newTeam("pickn-spread")
		ns, selected := t.appNamespace("spread")
		policy := pickN(3)
		policy.TopologySpreadConstraints = []placementv1beta1.TopologySpreadConstraint{{
			MaxSkew: ptr.To[int32](1), TopologyKey: "region", WhenUnsatisfiable: placementv1beta1.DoNotSchedule,
		}}
		t.place(newCRP("app", policy, namespaceSelector(ns)))

		regions := map[string]string{}
		for _, m := range memberSpecs {
			regions[m.Name] = m.Labels["region"]
		}
		Eventually(func(g Gomega) {
			decisions := t.decisions(g, "app")
			picked := selectedClusters(decisions)
			g.Expect(picked).To(HaveLen(3), describeDecisions(decisions))
			var pickedRegions []string
			for _, m := range picked {
				pickedRegions = append(pickedRegions, regions[m])
			}
			g.Expect(pickedRegions).To(ConsistOf("eastus", "westus", "westeurope"), "one cluster per region")
			// The eastus cluster left out would have skewed the spread.
			for _, m := range []string{"member-1", "member-3"} {
				if d, ok := decisions[m]; ok && !d.Selected {
					g.Expect(d.Reason).To(Equal(`violated doNotSchedule topology spread constraint "region" (max skew 1)`))
				}
			}
			expectAvailable(g, t.getCRP(g, "app"), picked, selected, "0")
			expectOnlyOn(g, framework.Namespace(ns), picked...)
		}).Should(Succeed())
	})
})
