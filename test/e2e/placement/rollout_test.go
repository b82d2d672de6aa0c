package placement

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("Scaling a PickN placement", func() {
	It("adds and removes only the difference, on the same policy snapshot", func() {
		t := newTeam("scale")
		ns, selected := t.appNamespace("scale")
		t.place(newCRP("app", pickN(1), namespaceSelector(ns)))

		expectScaled := func(g Gomega, want string, clusters ...string) map[string]placementv1beta1.ClusterResourceBinding {
			expectAvailable(g, t.getCRP(g, "app"), clusters, selected, "0")
			snap := t.latestPolicySnapshot(g, "app")
			g.Expect(snap.Name).To(Equal("app-0"), "scaling does not make a new policy snapshot")
			g.Expect(snap.Annotations).To(HaveKeyWithValue(placementv1beta1.NumberOfClustersAnnotation, want))
			g.Expect(selectedClusters(t.decisions(g, "app"))).To(Equal(clusters))
			bindings := t.activeBindings(g, "app")
			g.Expect(keys(bindings)).To(Equal(clusters))
			expectOnlyOn(g, framework.Namespace(ns), clusters...)
			return bindings
		}

		// Ties go to the lexicographically larger names.
		var first, third placementv1beta1.ClusterResourceBinding
		Eventually(func(g Gomega) {
			first = expectScaled(g, "1", "member-4")["member-4"]
		}).Should(Succeed())

		By("scaling up to 3")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy.NumberOfClusters = ptr.To[int32](3)
		})
		Eventually(func(g Gomega) {
			bindings := expectScaled(g, "3", "member-2", "member-3", "member-4")
			g.Expect(bindings["member-4"].Name).To(Equal(first.Name), "the first cluster keeps its binding")
			g.Expect(bindings["member-4"].UID).To(Equal(first.UID))
			third = bindings["member-3"]
		}).Should(Succeed())

		By("scaling down to 2")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy.NumberOfClusters = ptr.To[int32](2)
		})
		Eventually(func(g Gomega) {
			// The lowest ranked cluster goes: equal scores, smallest name.
			bindings := expectScaled(g, "2", "member-3", "member-4")
			for _, kept := range []placementv1beta1.ClusterResourceBinding{first, third} {
				b := bindings[kept.Spec.TargetCluster]
				g.Expect(b.Name).To(Equal(kept.Name), "%s keeps its binding", kept.Spec.TargetCluster)
				g.Expect(b.UID).To(Equal(kept.UID))
			}
		}).Should(Succeed())
	})
})

// deploymentOn reads a Deployment from a member cluster.
func deploymentOn(g Gomega, m, ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.ExpectWithOffset(1, memberClient(m).Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed(), "Deployment on %s", m)
	return d
}

var _ = Describe("A rolling update with maxUnavailable 1", func() {
	It("stops after one cluster when the new version never becomes available, and converges once it is fixed", func() {
		t := newTeam("rollout")
		ns := framework.UniqueName("web")
		t.Create(framework.Ctx(), framework.Namespace(ns), deployment(ns, "web", "nginx:1.27"))
		selected := []placementv1beta1.ResourceIdentifier{namespaceID(ns), deploymentID(ns, "web")}
		crp := newCRP("web", pickAll(placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "canary"}}},
		}}), namespaceSelector(ns))
		crp.Spec.Strategy = placementv1beta1.RolloutStrategy{
			Type:          placementv1beta1.RollingUpdateRolloutStrategyType,
			RollingUpdate: &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		}
		t.place(crp)
		targets := []string{"member-1", "member-2", "member-3"}

		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web"), targets, selected, "0")
			for _, m := range targets {
				d := deploymentOn(g, m, ns, "web")
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
				g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1), "available replicas on %s", m)
			}
		}).Should(Succeed())

		updateDeployment := func(change func(*appsv1.Deployment)) {
			update(t.Client, deployment(ns, "web", ""), change)
		}

		By("updating the Deployment on the hub so that it can never become available")
		// kwok runs any image, so the new version asks for a node no member has.
		updateDeployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
			d.Spec.Template.Spec.NodeSelector = map[string]string{"fleetplane.io/no-such-node": "true"}
		})
		stuck := func(g Gomega) {
			var updated, old []string
			for cluster, b := range t.activeBindings(g, "web") {
				switch b.Spec.ResourceSnapshotName {
				case "web-1-snapshot":
					updated = append(updated, cluster)
				case "web-0-snapshot":
					old = append(old, cluster)
				default:
					g.Expect(b.Spec.ResourceSnapshotName).To(BeElementOf("web-0-snapshot", "web-1-snapshot"), cluster)
				}
			}
			g.Expect(updated).To(HaveLen(1), "exactly one cluster gets the new version")
			g.Expect(old).To(HaveLen(2))
			d := deploymentOn(g, updated[0], ns, "web")
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.28"))
			g.Expect(d.Spec.Template.Spec.NodeSelector).To(HaveKey("fleetplane.io/no-such-node"))
			for _, m := range old {
				d := deploymentOn(g, m, ns, "web")
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"), "the old version stays on %s", m)
				g.Expect(d.Spec.Template.Spec.NodeSelector).To(BeEmpty())
			}

			crp := t.getCRP(g, "web")
			g.Expect(crp.Status.ObservedResourceIndex).To(Equal("1"))
			g.Expect(crp.Status.SelectedResources).To(ConsistOf(selected))
			available := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType))
			g.Expect(available.Status).NotTo(Equal(metav1.ConditionTrue), "%+v", available)
			started := framework.Condition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementRolloutStartedConditionType))
			g.Expect(started.Status).To(Equal(metav1.ConditionFalse), "%+v", started)
			g.Expect(started.Reason).To(Equal(placementv1beta1.RolloutNotStartedYetReason))
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				if pcs.ClusterName == updated[0] {
					g.Expect(pcs.ObservedResourceIndex).To(Equal("1"))
					g.Expect(framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterAppliedConditionType)).Status).To(Equal(metav1.ConditionTrue))
					c := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterAvailableConditionType))
					g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Available on %s: %+v", pcs.ClusterName, c)
					g.Expect(c.Reason).To(Equal(placementv1beta1.WorkNotAvailableReason))
					continue
				}
				g.Expect(pcs.ObservedResourceIndex).To(Equal("0"))
				c := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterRolloutStartedConditionType))
				g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "RolloutStarted on %s: %+v", pcs.ClusterName, c)
				g.Expect(c.Reason).To(Equal(placementv1beta1.RolloutNotStartedYetReason))
			}
		}
		Eventually(stuck).Should(Succeed())
		By("the rollout stays stopped while the updated cluster is unavailable")
		Consistently(stuck, "5s").Should(Succeed())

		By("fixing the Deployment on the hub")
		updateDeployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.NodeSelector = nil })
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web"), targets, selected, "2")
			for cluster, b := range t.activeBindings(g, "web") {
				g.Expect(b.Spec.ResourceSnapshotName).To(Equal("web-2-snapshot"), cluster)
			}
			for _, m := range targets {
				d := deploymentOn(g, m, ns, "web")
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.28"))
				g.Expect(d.Spec.Template.Spec.NodeSelector).To(BeEmpty())
				g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(1))
				g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1))
			}
		}).Should(Succeed())
	})
})

// servingOn samples which members hold the app's Deployment, and on which
// of them it is available. Members are read in name order: a spec that moves
// an app from lower to higher names then never sees a new cluster as not yet
// available after it saw the old ones gone, unless that really happened.
func servingOn(clients map[string]client.Client, ns string) (holding, available map[string]bool) {
	holding, available = map[string]bool{}, map[string]bool{}
	for _, m := range keys(clients) {
		c := clients[m]
		d, namespace := &appsv1.Deployment{}, &corev1.Namespace{}
		if err := c.Get(framework.Ctx(), client.ObjectKey{Name: ns}, namespace); err != nil || !namespace.DeletionTimestamp.IsZero() {
			continue
		}
		if err := c.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil || !d.DeletionTimestamp.IsZero() {
			continue
		}
		holding[m] = true
		available[m] = d.Status.AvailableReplicas >= 1 && d.Status.ObservedGeneration == d.Generation
	}
	return holding, available
}

var _ = Describe("A policy change under rolling-update limits", Serial, func() {
	// After the seeds' rolling-update example 2: PickN 2 moves from two
	// clusters to two others with the default maxUnavailable (25% of
	// 2, rounded up: 1), here with maxSurge 1, so that both limits bind:
	// at most N + maxSurge = 3 clusters hold the app, at least
	// N - maxUnavailable = 1 serves it.
	It("brings a new cluster up before the old ones go, never holds more than N + maxSurge, never leaves the app unavailable", func() {
		t := newTeam("surge")
		ns := framework.UniqueName("surge")
		clients := map[string]client.Client{}
		for _, m := range allMembers() {
			clients[m] = memberClient(m)
		}
		t.Create(framework.Ctx(), framework.Namespace(ns), deployment(ns, "web", "nginx:1.27"))
		crp := newCRP("app", withPickN(2, labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns))
		crp.Spec.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxSurge: ptr.To(intstr.FromInt32(1))}
		t.place(crp)
		Eventually(func(g Gomega) {
			_, available := servingOn(clients, ns)
			g.Expect(available).To(Equal(map[string]bool{"member-1": true, "member-2": true}))
		}).Should(Succeed())

		By("moving the placement to the canary and staging clusters, sampling the members as it goes")
		var history []map[string]bool
		var holdings []map[string]bool
		done := make(chan struct{})
		stopped := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			for {
				holding, available := servingOn(clients, ns)
				holdings, history = append(holdings, holding), append(history, available)
				select {
				case <-done:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		// The hub's side, sampled faster: which clusters hold a binding in
		// which state.
		var bindingSamples []map[string]placementv1beta1.BindingState
		bindingsStopped := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(bindingsStopped)
			for {
				list := &placementv1beta1.ClusterResourceBindingList{}
				if err := t.Client.List(framework.Ctx(), list, client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: "app"}); err == nil {
					sample := map[string]placementv1beta1.BindingState{}
					for _, b := range list.Items {
						if b.DeletionTimestamp.IsZero() {
							sample[b.Spec.TargetCluster] = b.Spec.State
						}
					}
					bindingSamples = append(bindingSamples, sample)
				}
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy = withPickN(2, placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"canary", "staging"}}}}})
		})
		Eventually(func(g Gomega) {
			holding, available := servingOn(clients, ns)
			g.Expect(holding).To(Equal(map[string]bool{"member-3": true, "member-4": true}))
			g.Expect(available).To(Equal(map[string]bool{"member-3": true, "member-4": true}))
		}).Should(Succeed())
		close(done)
		<-stopped
		<-bindingsStopped

		for i, available := range history {
			n := 0
			for _, ok := range available {
				if ok {
					n++
				}
			}
			Expect(n).To(BeNumerically(">=", 1), "sample %d: at least N - maxUnavailable = 1 cluster serves the app: %v", i, holdings[i])
		}
		surged := false
		for i, b := range bindingSamples {
			holding := 0
			for _, state := range b {
				if state != placementv1beta1.BindingStateScheduled {
					holding++
				}
			}
			Expect(holding).To(BeNumerically("<=", 3), "binding sample %d: at most N + maxSurge = 3 clusters hold the app: %v", i, b)
			surged = surged || holding == 3
		}
		Expect(surged).To(BeTrue(), "maxSurge 1 lets a new cluster come up while both old ones still hold the app: %v", bindingSamples)
	})
})

// withPickN is a PickN policy with required terms.
func withPickN(n int32, required ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.PlacementPolicy {
	p := pickN(n)
	p.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: required},
	}}
	return p
}
