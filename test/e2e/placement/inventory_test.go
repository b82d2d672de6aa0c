package placement

import (
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// bindInventory binds the cluster inventory API in the team's workspace,
// as the team, and waits until kcp serves it there.
func bindInventory(t *team) {
	b := &apisv1alpha2.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-inventory"},
		Spec: apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{
			Export: &apisv1alpha2.ExportBindingReference{Path: "root:fleet", Name: "multicluster.x-k8s.io"}}},
	}
	ExpectWithOffset(1, t.Client.Create(framework.Ctx(), b)).To(Succeed())
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(b), b)).To(Succeed())
		g.Expect(b.Status.Phase).To(Equal(apisv1alpha2.APIBindingPhaseBound))
	}).Should(Succeed())
}

// profiles lists the ClusterProfiles a client sees in fleet-system, by name.
func profiles(g Gomega, c client.Client) map[string]inventoryv1alpha1.ClusterProfile {
	list := &inventoryv1alpha1.ClusterProfileList{}
	g.ExpectWithOffset(1, c.List(framework.Ctx(), list, client.InNamespace("fleet-system"))).To(Succeed())
	out := map[string]inventoryv1alpha1.ClusterProfile{}
	for _, p := range list.Items {
		out[p.Name] = p
	}
	return out
}

var _ = Describe("The cluster inventory API", Serial, func() {
	It("shows each team that binds it ClusterProfiles of exactly the clusters its grant gives it, following the grant", func() {
		a, b, other := newTeam("inventory-a"), newTeam("inventory-b"), newTeam("inventory-none")
		bindInventory(a)
		bindInventory(b)
		fc := fleetClient()
		limitAllTeams(a.Path)
		canary := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("inventory-b")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{b.Path},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fc.Create(framework.Ctx(), canary)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), canary))).To(Succeed()) })

		Eventually(func(g Gomega) {
			g.Expect(profiles(g, a.Client)).To(HaveLen(len(allMembers())), "team A has every member")
			seen := profiles(g, b.Client)
			g.Expect(seen).To(HaveLen(1))
			p, ok := seen["member-3"]
			g.Expect(ok).To(BeTrue(), "team B sees its canary cluster: %v", seen)
			g.Expect(p.Spec.ClusterManager.Name).To(Equal("Fleetplane"))
			g.Expect(p.Labels).To(HaveKeyWithValue(inventoryv1alpha1.LabelClusterManagerKey, "Fleetplane"))
			g.Expect(p.Labels).To(HaveKeyWithValue("env", "canary"), "the member's labels, for selectors")
			g.Expect(p.Status.Version.Kubernetes).To(HavePrefix("v1."))
			g.Expect(p.Status.Properties).To(ContainElement(HaveField("Name", "kubernetes-fleet.io/node-count")))
			healthy := framework.Condition(p.Status.Conditions, inventoryv1alpha1.ClusterConditionControlPlaneHealthy)
			g.Expect(healthy.Status).To(Equal(metav1.ConditionTrue), "%+v", healthy)
		}).Should(Succeed())

		By("a team that did not bind the inventory API is not served it, and gets no profiles")
		err := other.Client.List(framework.Ctx(), &inventoryv1alpha1.ClusterProfileList{}, client.InNamespace("fleet-system"))
		Expect(meta.IsNoMatchError(err) || apierrors.IsNotFound(err)).To(BeTrue(), "listing ClusterProfiles unbound: %v", err)

		By("the platform workspace has a profile for every member")
		Eventually(func(g Gomega) { g.Expect(profiles(g, fc)).To(HaveLen(len(allMembers()))) }).Should(Succeed())

		By("a team cannot write its profiles")
		forged := &inventoryv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "member-1"},
			Spec: inventoryv1alpha1.ClusterProfileSpec{ClusterManager: inventoryv1alpha1.ClusterManager{Name: "Fleetplane"}}}
		Expect(apierrors.IsForbidden(b.Client.Create(framework.Ctx(), forged))).To(BeTrue(), "a team creating a ClusterProfile")
		own := profiles(Default, b.Client)["member-3"]
		Expect(apierrors.IsForbidden(b.Client.Delete(framework.Ctx(), &own))).To(BeTrue(), "a team deleting its ClusterProfile")

		By("widening team B's grant gives it every member's profile; removing it takes them away")
		updateGrant(canary.Name, func(g *tenancyv1alpha1.ClusterGrant) { g.Spec.ClusterSelector = &metav1.LabelSelector{} })
		Eventually(func(g Gomega) { g.Expect(profiles(g, b.Client)).To(HaveLen(len(allMembers()))) }).Should(Succeed())
		Expect(fc.Delete(framework.Ctx(), canary)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(profiles(g, b.Client)).To(BeEmpty()) }).Should(Succeed())
		Expect(profiles(Default, a.Client)).To(HaveLen(len(allMembers())), "team A keeps its own")
	})
})
