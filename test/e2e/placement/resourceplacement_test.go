package placement

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("A ResourcePlacement next to a ClusterResourcePlacement of its namespace", func() {
	// The config/samples/team-a pattern: a CRP places the namespace alone
	// (selectionScope NamespaceOnly), an RP in that namespace places what is
	// inside it.
	It("places its resources only on the clusters where the namespace exists", func() {
		t := newTeam("rp")
		ns := framework.UniqueName("web")
		t.Create(framework.Ctx(), framework.Namespace(ns),
			deployment(ns, "web", "nginx:1.27"),
			framework.ConfigMap(ns, "web-settings", map[string]string{"greeting": "hello"}),
			framework.ConfigMap(ns, "not-selected", map[string]string{"a": "b"}))

		nsOnly := namespaceSelector(ns)
		nsOnly.SelectionScope = placementv1beta1.NamespaceOnly
		t.place(newCRP("web-namespace", pickFixed("member-1", "member-3"), nsOnly))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web-namespace"), []string{"member-1", "member-3"},
				[]placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "0")
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-3")
			expectGoneFrom(g, framework.ConfigMap(ns, "web-settings", nil), "member-1", "member-3")
			// The syncers report the namespace, which is what the scheduler
			// goes by.
			for _, m := range []string{"member-1", "member-3"} {
				g.Expect(framework.MemberCluster(g, fleetClient(), m).Status.Namespaces).To(HaveKey(ns), m)
			}
		}).Should(Succeed())

		rp := &placementv1beta1.ResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{
					{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"},
					{Group: "", Version: "v1", Kind: "ConfigMap", Name: "web-settings"},
				},
				Policy: pickAll(),
			},
		}
		t.place(rp)

		selected := []placementv1beta1.ResourceIdentifier{deploymentID(ns, "web"), configMapID(ns, "web-settings")}
		Eventually(func(g Gomega) {
			got := &placementv1beta1.ResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(rp), got)).To(Succeed())
			expectAvailable(g, got, []string{"member-1", "member-3"}, selected, "0")

			snaps := &placementv1beta1.SchedulingPolicySnapshotList{}
			g.Expect(t.Client.List(framework.Ctx(), snaps, client.InNamespace(ns), client.MatchingLabels{
				placementv1beta1.PlacementTrackingLabel: "web", placementv1beta1.IsLatestSnapshotLabel: "true",
			})).To(Succeed())
			g.Expect(snaps.Items).To(HaveLen(1))
			decisions := map[string]placementv1beta1.ClusterDecision{}
			for _, d := range snaps.Items[0].Status.ClusterDecisions {
				decisions[d.ClusterName] = d
			}
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-3"}))
			for _, m := range []string{"member-2", "member-4"} {
				g.Expect(decisions[m].Reason).To(Equal(fmt.Sprintf("namespace %q does not exist on the cluster", ns)), m)
			}

			expectOnlyOn(g, deployment(ns, "web", ""), "member-1", "member-3")
			expectOnlyOn(g, framework.ConfigMap(ns, "web-settings", nil), "member-1", "member-3")
			expectGoneFrom(g, framework.ConfigMap(ns, "not-selected", nil), allMembers()...)
			g.Expect(deploymentOn(g, "member-3", ns, "web").Status.AvailableReplicas).To(BeEquivalentTo(1))
		}).Should(Succeed())
	})
})
