package placement

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

const samplesDir = "../../../config/samples"

// The samples in config/samples are what the docs tell users to apply: they
// must work as written.
var _ = Describe("The samples", func() {
	It("team-a: the namespace goes everywhere, the app to two production clusters", func() {
		t := newTeam("team-a")
		placements := t.applySamples("team-a/00-namespace.yaml", "team-a/10-deployment.yaml", "team-a/20-crp-namespace.yaml", "team-a/30-rp-web.yaml")
		Expect(placements).To(HaveLen(2))
		// As the sample says: the app is placed once the namespace is
		// everywhere, so that its preference decides among all clusters.
		t.place(placements[0])
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web-namespace"), allMembers(), []placementv1beta1.ResourceIdentifier{namespaceID("web")}, "0")
		}).Should(Succeed())
		// The scheduler sees the namespace on a member once the member
		// reports it, which may come just after the placement is Available.
		Eventually(func(g Gomega) {
			for _, m := range allMembers() {
				g.Expect(framework.MemberCluster(g, fleetClient(), m).Status.Namespaces).To(HaveKey("web"), "the namespaces %s reports", m)
			}
		}).Should(Succeed())
		t.place(placements[1])
		Eventually(func(g Gomega) {
			rp := &placementv1beta1.ResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "web"}, rp)).To(Succeed())
			expectAvailable(g, rp, []string{"member-1", "member-2"}, []placementv1beta1.ResourceIdentifier{
				deploymentID("web", "web"), configMapID("web", "web-settings"),
				{Version: "v1", Kind: "Service", Namespace: "web", Name: "web"},
			}, "0")
		}).Should(Succeed())

		By("the overrides: three replicas on production clusters, pods and namespace labelled with their cluster")
		Expect(t.applySamples("team-a/40-ro-web.yaml", "team-a/50-cro-namespace.yaml")).To(BeEmpty())
		regions := map[string]string{"member-1": "eastus", "member-2": "westus"}
		Eventually(func(g Gomega) {
			for _, m := range allMembers() {
				nsOn := &corev1.Namespace{}
				g.Expect(memberClient(m).Get(framework.Ctx(), client.ObjectKey{Name: "web"}, nsOn)).To(Succeed())
				g.Expect(nsOn.Labels).To(HaveKeyWithValue("fleet-cluster", m))
			}
			for m, region := range regions {
				d := deploymentOn(g, m, "web", "web")
				g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)), "replicas on %s", m)
				g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("fleet-cluster", m))
				g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("fleet-region", region))
			}
			rp := &placementv1beta1.ResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "web"}, rp)).To(Succeed())
			g.Expect(framework.Condition(rp.Status.Conditions, string(placementv1beta1.ResourcePlacementOverriddenConditionType)).Reason).To(Equal(placementv1beta1.OverriddenSucceededReason))
		}).Should(Succeed())

		By("the envelope: a quota and a role on every member, none on the hub")
		limits := t.applySamples("team-a/60-envelope-quota.yaml")
		Expect(limits).To(HaveLen(1))
		t.place(limits[0])
		Eventually(func(g Gomega) {
			rp := &placementv1beta1.ResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "web-limits"}, rp)).To(Succeed())
			expectAvailable(g, rp, allMembers(), []placementv1beta1.ResourceIdentifier{envelopeID("ResourceEnvelope", "web", "web-limits")}, "0")
			expectOnlyOn(g, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web"}}, allMembers()...)
			expectOnlyOn(g, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web-reader"}}, allMembers()...)
		}).Should(Succeed())
		Expect(apierrors.IsNotFound(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "web-reader"}, &rbacv1.Role{}))).To(BeTrue())

		By("the apply strategies: a report of the namespace, and flags whose member changes are kept")
		more := t.applySamples("team-a/70-crp-report-diff.yaml", "team-a/80-rp-keep-drift.yaml")
		Expect(more).To(HaveLen(2))
		for _, p := range more {
			t.place(p)
		}
		Eventually(func(g Gomega) {
			audit := t.getCRP(g, "web-audit")
			reported := framework.Condition(audit.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementDiffReportedConditionType))
			g.Expect(reported.Status).To(Equal(metav1.ConditionTrue), "%+v", reported)
			rp := &placementv1beta1.ResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "web-flags"}, rp)).To(Succeed())
			expectAvailable(g, rp, allMembers(), []placementv1beta1.ResourceIdentifier{configMapID("web", "web-flags")}, "0")
		}).Should(Succeed())
	})

	It("status: the member's Deployment status shows on the team's, and in the workload report", func() {
		t := newTeam("status")
		placements := t.applySamples("status/00-app.yaml", "status/10-crp-mirror.yaml")
		Expect(placements).To(HaveLen(1))
		t.place(placements[0])
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "shop", Name: "shop"}, d)).To(Succeed())
			g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(2), "the hub Deployment shows the member's")
			r := t.workloadReport(g, "shop")
			g.Expect(r.Status.ReadyReplicas).To(Equal("2/2"))
			g.Expect(r.Status.AvailableClusters).To(Equal("1/1"))
		}).Should(Succeed())
	})

	It("envelopes: the platform's webhook configuration and ClusterRole reach the production clusters", func() {
		t := platform()
		placements := t.applySamples("envelopes/clusterresourceenvelope.yaml")
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(t.Client.Delete(framework.Ctx(), &placementv1beta1.ClusterResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Name: "fleet-guard"}}))).To(Succeed())
		})
		Expect(placements).To(HaveLen(1))
		t.place(placements[0])
		Eventually(func(g Gomega) {
			expectAvailableUntrackable(g, t.getCRP(g, "fleet-guard"), []string{"member-1", "member-2"}, []placementv1beta1.ResourceIdentifier{envelopeID("ClusterResourceEnvelope", "", "fleet-guard")}, "0")
			expectOnlyOn(g, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-guard-reader"}}, "member-1", "member-2")
		}).Should(Succeed())
	})

	It("staged: the run goes staging, then canary and prod on approval", func() {
		t := newTeam("staged-sample")
		placements := t.applySamples("staged/00-app.yaml", "staged/10-crp-external.yaml")
		Expect(placements).To(HaveLen(1))
		t.place(placements[0])
		t.waitScheduled("shop", allMembers()...)
		t.applySamples("staged/20-strategy.yaml", "staged/30-run.yaml")
		settings := framework.ConfigMap("shop", "shop-settings", nil)
		Eventually(func(g Gomega) {
			expectOnlyOn(g, settings, "member-4")
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "shop-rollout-before-canary"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
		}).Should(Succeed())
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "shop-rollout-before-canary"}})
		Eventually(func(g Gomega) {
			expectOnlyOn(g, settings, allMembers()...)
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "shop-rollout-after-prod"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
		}).Should(Succeed())
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "shop-rollout-after-prod"}})
		Eventually(func(g Gomega) {
			g.Expect(runCondition(t.getRun(g, "shop-rollout"), "Succeeded").Reason).To(Equal(placementv1beta1.UpdateRunSucceededReason))
		}).Should(Succeed())
	})

	It("eviction: the budget lets one cluster go", func() {
		t := newTeam("eviction-sample")
		t.applySamples("team-a/00-namespace.yaml")
		placements := t.applySamples("team-a/20-crp-namespace.yaml")
		t.place(placements[0])
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "web-namespace"), allMembers(), []placementv1beta1.ResourceIdentifier{namespaceID("web")}, "0")
		}).Should(Succeed())
		t.applySamples("eviction/10-budget.yaml", "eviction/20-eviction.yaml")
		t.expectEviction("web-namespace-member-1", true, ptr.To(true), "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 4, totalPlacements: 4")
	})

	DescribeTable("scheduling: each placement picks the clusters its comment promises",
		func(file, name string, clusters []string) {
			t := newTeam("scheduling")
			t.applySamples("scheduling/namespace.yaml")
			placements := t.applySamples("scheduling/" + file)
			Expect(placements).To(HaveLen(1))
			t.place(placements[0])
			Eventually(func(g Gomega) {
				expectAvailable(g, t.getCRP(g, name), clusters, []placementv1beta1.ResourceIdentifier{namespaceID("ops"), configMapID("ops", "settings")}, "0")
			}).Should(Succeed())
		},
		Entry(nil, "crp-pickall-labels.yaml", "ops-prod", []string{"member-1", "member-2"}),
		Entry(nil, "crp-pickall-nodecount.yaml", "ops-big", []string{"member-1", "member-2", "member-4"}),
		Entry(nil, "crp-pickfixed.yaml", "ops-fixed", []string{"member-1", "member-2"}),
		// One per region, the most free CPU first: eastus gives member-1.
		Entry(nil, "crp-pickn-spread.yaml", "ops-spread", []string{"member-1", "member-2", "member-4"}),
		Entry(nil, "crp-tolerations.yaml", "ops-tolerant", []string{"member-1", "member-2", "member-3", "member-4"}),
	)
})

// applySamples creates the objects of sample files in the team's workspace,
// except placements, which it returns for the spec to place.
func (t *team) applySamples(files ...string) []placementv1beta1.PlacementObj {
	var placements []placementv1beta1.PlacementObj
	for _, f := range files {
		m, err := framework.LoadManifest(filepath.Join(samplesDir, f))
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		for _, o := range m.Objects {
			var p placementv1beta1.PlacementObj
			switch o.GetKind() {
			case "ClusterResourcePlacement":
				p = &placementv1beta1.ClusterResourcePlacement{}
			case "ResourcePlacement":
				p = &placementv1beta1.ResourcePlacement{}
			default:
				ExpectWithOffset(1, t.Client.Create(framework.Ctx(), o)).To(Succeed(), "creating %s %s of %s", o.GetKind(), o.GetName(), f)
				continue
			}
			// v1 and v1beta1 placements share their schema.
			ExpectWithOffset(1, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, p)).To(Succeed())
			p.GetObjectKind().SetGroupVersionKind(placementv1beta1.GroupVersion.WithKind(o.GetKind()))
			placements = append(placements, p)
		}
	}
	return placements
}
