package placement

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("Deleting a placement", func() {
	It("removes what it placed from the members and its Work from the hub, and leaves the hub's objects alone", func() {
		t := newTeam("delete")
		ns := framework.UniqueName("doomed")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"k": "v"}), deployment(ns, "web", "nginx:1.27"))
		selected := []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings"), deploymentID(ns, "web")}
		crp := newCRP("app", pickAll(labelTerm(map[string]string{"env": "prod"})), namespaceSelector(ns))
		t.place(crp)

		var ws string
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1", "member-2"}, selected, "0")
			expectOnlyOn(g, deployment(ns, "web", ""), "member-1", "member-2")
			ws = t.logicalCluster(g, "app")
			works := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), works, client.MatchingLabels{placementv1beta1.WorkspaceLabel: ws})).To(Succeed())
			g.Expect(works.Items).To(HaveLen(2))
			// Internal objects keep none of the API server's field records.
			bindings := &placementv1beta1.ClusterResourceBindingList{}
			g.Expect(t.Client.List(framework.Ctx(), bindings)).To(Succeed())
			for _, w := range works.Items {
				g.Expect(w.ManagedFields).To(BeEmpty(), "Work %s", w.Name)
			}
			for _, b := range bindings.Items {
				g.Expect(b.ManagedFields).To(BeEmpty(), "binding %s", b.Name)
			}
		}).Should(Succeed())

		t.deletePlacement(crp)
		Eventually(func(g Gomega) {
			expectGoneFrom(g, framework.Namespace(ns), allMembers()...)
			works := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), works, client.MatchingLabels{placementv1beta1.WorkspaceLabel: ws})).To(Succeed())
			g.Expect(works.Items).To(BeEmpty())
			bindings := &placementv1beta1.ClusterResourceBindingList{}
			g.Expect(t.Client.List(framework.Ctx(), bindings)).To(Succeed())
			g.Expect(bindings.Items).To(BeEmpty())
			snaps := &placementv1beta1.ClusterResourceSnapshotList{}
			g.Expect(t.Client.List(framework.Ctx(), snaps)).To(Succeed())
			g.Expect(snaps.Items).To(BeEmpty())
		}).Should(Succeed())
		Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{})).To(Succeed(), "the hub's own objects stay")
	})
})

var _ = Describe("Deleting a placement with deleteStrategy Abandon", func() {
	It("leaves what it placed on the members, no longer owned by the fleet", func() {
		t := newTeam("abandon")
		ns, selected := t.appNamespace("kept")
		crp := newCRP("app", pickFixed("member-2"), namespaceSelector(ns))
		crp.Spec.Strategy.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: placementv1beta1.DeletePropagationPolicyAbandon}
		t.place(crp)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-2"}, selected, "0")
		}).Should(Succeed())
		ws := t.logicalCluster(Default, "app")

		t.deletePlacement(crp)
		Eventually(func(g Gomega) {
			works := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), works, client.MatchingLabels{placementv1beta1.WorkspaceLabel: ws})).To(Succeed())
			g.Expect(works.Items).To(BeEmpty())
		}).Should(Succeed())
		mc := memberClient("member-2")
		cm := &corev1.ConfigMap{}
		Consistently(func(g Gomega) {
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			g.Expect(cm.DeletionTimestamp.IsZero()).To(BeTrue())
		}).WithTimeout(3 * time.Second).Should(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("team", t.Path))
		Expect(cm.OwnerReferences).To(BeEmpty(), "nothing on the member points at the fleet's AppliedWork any more")
		DeferCleanup(func() { Expect(mc.Delete(framework.Ctx(), framework.Namespace(ns))).To(Succeed()) })
	})
})

// placeLarge places a namespace with 8 ConfigMaps of 700 KB each (about
// 5 MB) on member-1 and checks that the selection is split over several
// resource snapshots (and Works) and arrives complete.
func placeLarge(applyStrategy *placementv1beta1.ApplyStrategy) {
	const (
		count = 8
		size  = 700 * 1024
	)
	t := newTeam("large")
	ns := framework.UniqueName("large")
	t.Create(framework.Ctx(), framework.Namespace(ns))
	selected := []placementv1beta1.ResourceIdentifier{namespaceID(ns)}
	for i := 0; i < count; i++ {
		name := fmt.Sprintf("blob-%d", i)
		t.Create(framework.Ctx(), framework.ConfigMap(ns, name, map[string]string{"blob": strings.Repeat(string(rune('a'+i)), size)}))
		selected = append(selected, configMapID(ns, name))
	}
	crp := newCRP("large", pickFixed("member-1"), namespaceSelector(ns))
	crp.Spec.Strategy.ApplyStrategy = applyStrategy
	t.place(crp)

	Eventually(func(g Gomega) {
		expectAvailable(g, t.getCRP(g, "large"), []string{"member-1"}, selected, "0")
	}).WithTimeout(3 * time.Minute).Should(Succeed())

	master := &placementv1beta1.ClusterResourceSnapshot{}
	Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "large-0-snapshot"}, master)).To(Succeed())
	n, err := strconv.Atoi(master.Annotations[placementv1beta1.NumberOfResourceSnapshotsAnnotation])
	Expect(err).NotTo(HaveOccurred())
	Expect(n).To(BeNumerically(">", 1), "the selection is split")
	Expect(master.Labels).To(HaveKeyWithValue(placementv1beta1.IsLatestSnapshotLabel, "true"))
	group := &placementv1beta1.ClusterResourceSnapshotList{}
	Expect(t.Client.List(framework.Ctx(), group, client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: "large", placementv1beta1.ResourceIndexLabel: "0"})).To(Succeed())
	Expect(group.Items).To(HaveLen(n))
	manifests := 0
	for _, s := range group.Items {
		manifests += len(s.Spec.SelectedResources)
	}
	Expect(manifests).To(Equal(count+1), "every selected object is in exactly one shard")

	works := &placementv1beta1.WorkList{}
	Expect(worksClient().List(framework.Ctx(), works, client.InNamespace("fleet-member-member-1"),
		client.MatchingLabels{placementv1beta1.WorkspaceLabel: t.logicalCluster(Default, "large")})).To(Succeed())
	Expect(works.Items).To(HaveLen(n), "one Work per snapshot shard")

	mc := memberClient("member-1")
	for i := 0; i < count; i++ {
		cm := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("blob-%d", i)}, cm)).To(Succeed())
		Expect(cm.Data["blob"]).To(HaveLen(size))
		Expect(cm.Data["blob"][:1]).To(Equal(string(rune('a' + i))))
	}
}

var _ = Describe("A placement of about 5 MB", func() {
	It("is split over several resource snapshots and arrives complete with server-side apply", func() {
		placeLarge(&placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeServerSideApply})
	})

	// Objects over 200 KiB are too big for the last-applied annotation: the
	// syncer applies them server-side instead.
	It("is split over several resource snapshots and arrives complete with the default client-side apply", func() {
		placeLarge(nil)
	})
})

// deletion is how a placement goes away in the delete-strategy loop.
type deletion struct {
	strategy placementv1beta1.DeletePropagationPolicy
	// force removes the placement's finalizers right after deleting it, so
	// that it is gone before its Work is cleaned up.
	force bool
}

var _ = Describe("Delete strategies", func() {
	DescribeTable("do exactly what they say, every time",
		func(d deletion, runs int) {
			t := newTeam("strategy")
			for i := 0; i < runs; i++ {
				By(fmt.Sprintf("run %d of %d", i+1, runs))
				ns, selected := t.appNamespace("strategy")
				crp := newCRP(framework.UniqueName("app"), pickFixed("member-2"), namespaceSelector(ns))
				crp.Spec.Strategy.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: d.strategy}
				Expect(t.Client.Create(framework.Ctx(), crp)).To(Succeed())
				Eventually(func(g Gomega) {
					expectAvailable(g, t.getCRP(g, crp.Name), []string{"member-2"}, selected, "0")
				}).Should(Succeed())
				ws := t.logicalCluster(Default, crp.Name)

				Expect(t.Client.Delete(framework.Ctx(), crp)).To(Succeed())
				if d.force {
					Eventually(func() error {
						if err := t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(crp), crp); err != nil {
							return client.IgnoreNotFound(err)
						}
						crp.Finalizers = nil
						return t.Client.Update(framework.Ctx(), crp)
					}).Should(Succeed())
				}
				Eventually(func(g Gomega) {
					works := &placementv1beta1.WorkList{}
					g.Expect(worksClient().List(framework.Ctx(), works, client.MatchingLabels{placementv1beta1.WorkspaceLabel: ws,
						placementv1beta1.PlacementTrackingLabel: crp.Name})).To(Succeed())
					g.Expect(works.Items).To(BeEmpty())
				}).Should(Succeed())
				if d.strategy == placementv1beta1.DeletePropagationPolicyDelete {
					Eventually(func(g Gomega) { expectGoneFrom(g, framework.Namespace(ns), "member-2") }).Should(Succeed())
					continue
				}
				for _, o := range []client.Object{framework.Namespace(ns), framework.ConfigMap(ns, "settings", nil)} {
					got := o.DeepCopyObject().(client.Object)
					Expect(memberClient("member-2").Get(framework.Ctx(), client.ObjectKeyFromObject(o), got)).To(Succeed(), "%T %s is kept", o, o.GetName())
					Expect(got.GetDeletionTimestamp().IsZero()).To(BeTrue(), "%T %s is not being deleted", o, o.GetName())
					Expect(got.GetOwnerReferences()).To(BeEmpty(), "%T %s points at no AppliedWork", o, o.GetName())
					for k := range got.GetAnnotations() {
						Expect(k).NotTo(HavePrefix("fleetplane.io/"), "%T %s", o, o.GetName())
					}
				}
				Expect(memberClient("member-2").Delete(framework.Ctx(), framework.Namespace(ns))).To(Succeed())
			}
		},
		// make test runs each 5 times (a run of Delete waits ~6 s for the
		// member to delete the namespace); make test-soak 20.
		Entry("Delete removes what the placement created", deletion{strategy: placementv1beta1.DeletePropagationPolicyDelete}, framework.Scale("FLEET_DELETE_RUNS", 5)),
		Entry("Abandon keeps everything, released", deletion{strategy: placementv1beta1.DeletePropagationPolicyAbandon}, framework.Scale("FLEET_DELETE_RUNS", 5)),
		Entry("Abandon holds when the placement is force-deleted", deletion{strategy: placementv1beta1.DeletePropagationPolicyAbandon, force: true}, 5),
	)
})
