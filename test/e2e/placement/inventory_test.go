package placement

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// profiles lists the ClusterProfiles a client sees in fleet-system, by name.
func profiles(g Gomega, c client.Client) map[string]inventoryv1alpha1.ClusterProfile {
	list := &inventoryv1alpha1.ClusterProfileList{}
	g.ExpectWithOffset(1, c.List(ctx(), list, client.InNamespace("fleet-system"))).To(Succeed())
	out := map[string]inventoryv1alpha1.ClusterProfile{}
	for _, p := range list.Items {
		out[p.Name] = p
	}
	return out
}

var _ = Describe("The cluster inventory API", Serial, func() {
	It("shows each team ClusterProfiles of exactly the clusters its grant gives it, following the grant", func() {
		a, b := newTeam("inventory-a"), newTeam("inventory-b")
		fc := fleetClient()
		limitAllTeams(a.path)
		canary := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: uniqueName("inventory-b")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{b.path},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fc.Create(ctx(), canary)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(ctx(), canary))).To(Succeed()) })

		Eventually(func(g Gomega) {
			g.Expect(profiles(g, a.c)).To(HaveLen(len(allMembers())), "team A has every member")
			seen := profiles(g, b.c)
			g.Expect(seen).To(HaveLen(1))
			p, ok := seen["member-3"]
			g.Expect(ok).To(BeTrue(), "team B sees its canary cluster: %v", seen)
			g.Expect(p.Spec.ClusterManager.Name).To(Equal("Fleetplane"))
			g.Expect(p.Labels).To(HaveKeyWithValue(inventoryv1alpha1.LabelClusterManagerKey, "Fleetplane"))
			g.Expect(p.Labels).To(HaveKeyWithValue("env", "canary"), "the member's labels, for selectors")
			g.Expect(p.Status.Version.Kubernetes).To(HavePrefix("v1."))
			g.Expect(p.Status.Properties).To(ContainElement(HaveField("Name", "kubernetes-fleet.io/node-count")))
			healthy := condition(p.Status.Conditions, inventoryv1alpha1.ClusterConditionControlPlaneHealthy)
			g.Expect(healthy.Status).To(Equal(metav1.ConditionTrue), "%+v", healthy)
		}).Should(Succeed())

		By("the platform workspace has a profile for every member")
		Eventually(func(g Gomega) { g.Expect(profiles(g, fc)).To(HaveLen(len(allMembers()))) }).Should(Succeed())

		By("a team cannot write its profiles")
		forged := &inventoryv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "member-1"},
			Spec: inventoryv1alpha1.ClusterProfileSpec{ClusterManager: inventoryv1alpha1.ClusterManager{Name: "Fleetplane"}}}
		Expect(apierrors.IsForbidden(b.c.Create(ctx(), forged))).To(BeTrue(), "a team creating a ClusterProfile")
		own := profiles(Default, b.c)["member-3"]
		Expect(apierrors.IsForbidden(b.c.Delete(ctx(), &own))).To(BeTrue(), "a team deleting its ClusterProfile")

		By("widening team B's grant gives it every member's profile; removing it takes them away")
		updateGrant(canary.Name, func(g *tenancyv1alpha1.ClusterGrant) { g.Spec.ClusterSelector = &metav1.LabelSelector{} })
		Eventually(func(g Gomega) { g.Expect(profiles(g, b.c)).To(HaveLen(len(allMembers()))) }).Should(Succeed())
		Expect(fc.Delete(ctx(), canary)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(profiles(g, b.c)).To(BeEmpty()) }).Should(Succeed())
		Expect(profiles(Default, a.c)).To(HaveLen(len(allMembers())), "team A keeps its own")
	})
})
