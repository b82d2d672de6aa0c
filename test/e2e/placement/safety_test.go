package placement

import (
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// uidsOn records the UIDs of objects on a member, to tell later whether
// they were ever deleted and re-created.
func uidsOn(g Gomega, memberName string, objs ...client.Object) map[string]types.UID {
	out := map[string]types.UID{}
	for _, o := range objs {
		got := o.DeepCopyObject().(client.Object)
		g.ExpectWithOffset(1, memberClient(memberName).Get(framework.Ctx(), client.ObjectKeyFromObject(o), got)).To(Succeed(), "%T %s on %s", o, o.GetName(), memberName)
		out[fmt.Sprintf("%T %s/%s", o, o.GetNamespace(), o.GetName())] = got.GetUID()
	}
	return out
}

var _ = Describe("A member cut off from the hub for two minutes", Serial, func() {
	It("keeps what it runs and its place in every placement, only gets no new placements meanwhile, and recovers fully", func() {
		t := newTeam("blip")
		// Three placements of three namespaces; each keeps member-4.
		crps := map[string]*placementv1beta1.PlacementPolicy{"all": pickAll(), "two": pickN(2), "fixed": pickFixed("member-4")}
		clusters := map[string][]string{"all": allMembers(), "two": {"member-3", "member-4"}, "fixed": {"member-4"}}
		selected := map[string][]placementv1beta1.ResourceIdentifier{}
		var objs []client.Object
		for name, policy := range crps {
			ns, sel := t.appNamespace("blip-" + name)
			selected[name] = sel
			objs = append(objs, framework.Namespace(ns), framework.ConfigMap(ns, "settings", nil))
			t.place(newCRP(name, policy, namespaceSelector(ns)))
		}
		expectAllAvailable := func(g Gomega) {
			for name := range crps {
				expectAvailable(g, t.getCRP(g, name), clusters[name], selected[name], "0")
			}
		}
		var before map[string]types.UID
		Eventually(func(g Gomega) {
			expectAllAvailable(g)
			before = uidsOn(g, "member-4", objs...)
		}).Should(Succeed())
		bindingsBefore := map[string]types.UID{}
		for _, crp := range []string{"all", "two", "fixed"} {
			bindingsBefore[crp] = t.activeBindings(Default, crp)["member-4"].UID
		}

		m4 := members.Named("member-4")
		By("running member-4's syncer through a proxy to the hub")
		proxy, err := localfleet.StartProxy(hub.Addr())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Close)
		Expect(m4.StopSyncer()).To(Succeed())
		syncer, err := m4.StartSyncerThrough(proxy, filepath.Join(GinkgoT().TempDir(), "syncer.log"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_ = syncer.Process.Kill()
			_ = syncer.Wait()
			Expect(hub.Join(framework.Ctx(), m4)).To(Succeed())
			Expect(hub.WaitMemberReady(framework.Ctx(), m4.Name)).To(Succeed())
		})
		expectHeartbeatAfter := func(t time.Time) {
			EventuallyWithOffset(1, func(g Gomega) {
				st := framework.MemberCluster(g, fleetClient(), m4.Name).Status
				g.Expect(st.AgentStatus).NotTo(BeEmpty())
				g.Expect(st.AgentStatus[0].LastReceivedHeartbeat.Time).To(BeTemporally(">", t))
				g.Expect(framework.Condition(st.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy).Status).To(Equal(metav1.ConditionTrue))
			}).Should(Succeed())
		}
		expectHeartbeatAfter(time.Now())

		By("cutting member-4 off from the hub for two minutes; its syncer keeps running")
		proxy.Cut()
		stopped := time.Now()
		Eventually(func(g Gomega) {
			health := framework.Condition(framework.MemberCluster(g, fleetClient(), m4.Name).Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy)
			g.Expect(health.Status).To(Equal(metav1.ConditionFalse), "%+v", health)
			g.Expect(health.Reason).To(Equal(clusterv1beta1.ReasonMemberAgentHeartbeatLost))
		}).Should(Succeed())

		By("placing anew while member-4 is unhealthy: it is not picked")
		nsNew, _ := t.appNamespace("blip-new")
		t.place(newCRP("new", pickAll(), namespaceSelector(nsNew)))
		Eventually(func(g Gomega) {
			decisions := t.decisions(g, "new")
			g.Expect(selectedClusters(decisions)).To(Equal([]string{"member-1", "member-2", "member-3"}), describeDecisions(decisions))
			g.Expect(decisions["member-4"].Reason).To(ContainSubstring("unhealthy"))
		}).Should(Succeed())

		newOnHealthy := func(g Gomega) {
			g.Expect(selectedClusters(t.decisions(g, "new"))).To(Equal([]string{"member-1", "member-2", "member-3"}))
		}
		stillPlaced := func(g Gomega) {
			for crp, uid := range bindingsBefore {
				b, ok := t.activeBindings(g, crp)["member-4"]
				g.Expect(ok).To(BeTrue(), "%s keeps its binding on member-4", crp)
				g.Expect(b.UID).To(Equal(uid), "%s's binding on member-4 is the same", crp)
				g.Expect(b.Spec.State).To(Equal(placementv1beta1.BindingStateBound))
				g.Expect(t.decisions(g, crp)["member-4"].Selected).To(BeTrue(), "%s still selects member-4", crp)
			}
			g.Expect(keys(t.activeBindings(g, "two"))).To(Equal([]string{"member-3", "member-4"}), "PickN does not replace an unhealthy member")
			works := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), works, client.InNamespace("fleet-member-member-4"),
				client.MatchingLabels{placementv1beta1.WorkspaceLabel: t.logicalCluster(g, "all")})).To(Succeed())
			byPlacement := map[string]bool{}
			for _, w := range works.Items {
				if crp := w.Labels[placementv1beta1.PlacementTrackingLabel]; crps[crp] != nil {
					byPlacement[crp] = w.DeletionTimestamp.IsZero()
				}
			}
			g.Expect(byPlacement).To(Equal(map[string]bool{"all": true, "two": true, "fixed": true}), "the Works for member-4 stay")
			g.Expect(uidsOn(g, "member-4", objs...)).To(Equal(before), "never deleted and re-created")
		}
		Consistently(func(g Gomega) {
			stillPlaced(g)
			newOnHealthy(g)
		}, 2*time.Minute-time.Since(stopped)).Should(Succeed())

		By("reconnecting member-4")
		proxy.Restore()
		expectHeartbeatAfter(time.Now())
		Eventually(func(g Gomega) {
			expectAllAvailable(g)
			// A PickAll placement picks the member up again once it is healthy.
			expectAvailable(g, t.getCRP(g, "new"), allMembers(), []placementv1beta1.ResourceIdentifier{namespaceID(nsNew), configMapID(nsNew, "settings")}, "0")
		}).Should(Succeed())
		Consistently(stillPlaced, "5s").Should(Succeed())
	})
})

var _ = Describe("The hub's internal objects", func() {
	It("can be read by a team but not forged, changed or removed; not even the hub admin writes Work", func() {
		t := newTeam("forger")
		ns, selected := t.appNamespace("forger")
		t.place(newCRP("app", pickFixed("member-1"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1"}, selected, "0")
		}).Should(Succeed())
		binding := t.activeBindings(Default, "app")["member-1"]
		snapshots := &placementv1beta1.ClusterResourceSnapshotList{}
		Expect(t.Client.List(framework.Ctx(), snapshots)).To(Succeed())
		Expect(snapshots.Items).NotTo(BeEmpty())

		By("forging a snapshot and a binding for a cluster the placement did not pick")
		forgedSnapshot := &placementv1beta1.ClusterResourceSnapshot{
			ObjectMeta: metav1.ObjectMeta{Name: "app-9-snapshot", Labels: map[string]string{
				placementv1beta1.PlacementTrackingLabel: "app", placementv1beta1.ResourceIndexLabel: "9"},
				Annotations: map[string]string{placementv1beta1.NumberOfResourceSnapshotsAnnotation: "1"}},
			Spec: placementv1beta1.ResourceSnapshotSpec{SelectedResources: []placementv1beta1.ResourceContent{
				{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"forged-` + ns + `"}}`)}}}},
		}
		forgedBinding := &placementv1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "app-member-2-forged", Labels: map[string]string{placementv1beta1.PlacementTrackingLabel: "app"}},
			Spec: placementv1beta1.ResourceBindingSpec{State: placementv1beta1.BindingStateBound, TargetCluster: "member-2",
				ResourceSnapshotName: forgedSnapshot.Name, SchedulingPolicySnapshotName: "app-0"},
		}
		for _, o := range []client.Object{forgedSnapshot, forgedBinding} {
			Expect(t.Client.Create(framework.Ctx(), o)).To(Satisfy(apierrors.IsForbidden), "creating %T", o)
		}

		By("changing and deleting what the controllers wrote")
		retarget := binding.DeepCopy()
		retarget.Spec.TargetCluster = "member-2"
		Expect(t.Client.Update(framework.Ctx(), retarget)).To(Satisfy(apierrors.IsForbidden), "retargeting the binding")
		Expect(t.Client.Delete(framework.Ctx(), &binding)).To(Satisfy(apierrors.IsForbidden), "deleting the binding")
		Expect(t.Client.Delete(framework.Ctx(), &snapshots.Items[0])).To(Satisfy(apierrors.IsForbidden), "deleting a snapshot")
		crp := t.getCRP(Default, "app")
		crp.Status.ObservedResourceIndex = "7"
		Expect(t.Client.Status().Update(framework.Ctx(), crp)).To(Satisfy(apierrors.IsForbidden), "writing the placement's status")

		By("writing Work in root:fleet as the hub admin")
		work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("admin-work"), Namespace: "fleet-member-member-2"}}
		Expect(fleetClient().Create(framework.Ctx(), work)).To(Satisfy(apierrors.IsForbidden))

		Consistently(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1"}, selected, "0")
			expectOnlyOn(g, framework.Namespace(ns), "member-1")
			expectOnlyOn(g, framework.Namespace("forged-"+ns))
		}, "3s").Should(Succeed())
	})
})

var _ = Describe("A team that rewrites its workspace's path", Serial, func() {
	It("keeps its own grant: grants follow the workspace tree, not the editable path annotation", func() {
		privileged, t := newTeam("privileged"), newTeam("pretender")

		By("granting every cluster to one team only, and the canary cluster to the other")
		limitAllTeams(privileged.Path)
		canary := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("pretender-canary")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), canary)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), canary))).To(Succeed()) })

		By("claiming the privileged team's path on the workspace's LogicalCluster (a workspace admin may edit it)")
		lc := &unstructured.Unstructured{}
		lc.SetGroupVersionKind(schema.GroupVersionKind{Group: "core.kcp.io", Version: "v1alpha1", Kind: "LogicalCluster"})
		lc.SetName("cluster")
		update(t.Client, lc, func(lc *unstructured.Unstructured) {
			ann := lc.GetAnnotations()
			ann["kcp.io/path"] = privileged.Path
			lc.SetAnnotations(ann)
		})

		ns, selected := t.appNamespace("pretender")
		t.place(newCRP("app", pickAll(), namespaceSelector(ns)))
		fixedNS, _ := t.appNamespace("pretender-fixed")
		t.place(newCRP("fixed", pickFixed("member-1"), namespaceSelector(fixedNS)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-3"}, selected, "0")
			decisions := t.decisions(g, "app")
			g.Expect(decisions["member-1"].Reason).To(ContainSubstring("is not granted"))
			g.Expect(t.decisions(g, "fixed")["member-1"].Reason).To(ContainSubstring("is not granted"), "naming a cluster does not reach past the grant")
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectOnlyOn(g, framework.Namespace(ns), "member-3")
			expectOnlyOn(g, framework.Namespace(fixedNS))
		}, "3s").Should(Succeed())
	})
})

// failedOn returns the failed placements a placement reports for a cluster.
func failedOn(g Gomega, p placementv1beta1.PlacementObj, cluster string) []placementv1beta1.FailedResourcePlacement {
	for _, pcs := range p.GetPlacementStatus().PerClusterPlacementStatuses {
		if pcs.ClusterName == cluster {
			return pcs.FailedPlacements
		}
	}
	g.ExpectWithOffset(1, false).To(BeTrue(), "no status for cluster %s%s", cluster, describeClusters(p.GetPlacementStatus()))
	return nil
}

// expectFailed checks that a placement failed to apply exactly the given
// resources on a cluster, each for the given reason, with a message that
// contains want.
func expectFailed(g Gomega, p placementv1beta1.PlacementObj, cluster, reason, want string, ids ...placementv1beta1.ResourceIdentifier) {
	var got []placementv1beta1.ResourceIdentifier
	for _, f := range failedOn(g, p, cluster) {
		g.ExpectWithOffset(1, f.Condition.Reason).To(Equal(reason), "%+v", f)
		g.ExpectWithOffset(1, f.Condition.Message).To(ContainSubstring(want), "%+v", f)
		got = append(got, f.ResourceIdentifier)
	}
	g.ExpectWithOffset(1, got).To(ConsistOf(ids))
}

// preexisting creates objects directly on a member, as its own admins would,
// and removes them when the spec ends.
func preexisting(memberName string, objs ...client.Object) {
	for _, o := range objs {
		ExpectWithOffset(1, memberClient(memberName).Create(framework.Ctx(), o)).To(Succeed(), "creating %T %s on %s", o, o.GetName(), memberName)
	}
	DeferCleanup(func() {
		for _, o := range objs {
			Expect(client.IgnoreNotFound(memberClient(memberName).Delete(framework.Ctx(), o))).To(Succeed())
		}
	})
}

// expectUntouched checks that an object on a member still has the given
// UID and carries nothing of Fleetplane's.
func expectUntouched(g Gomega, memberName string, obj client.Object, uid types.UID) {
	got := obj.DeepCopyObject().(client.Object)
	g.ExpectWithOffset(1, memberClient(memberName).Get(framework.Ctx(), client.ObjectKeyFromObject(obj), got)).To(Succeed(), "%T %s on %s", obj, obj.GetName(), memberName)
	g.ExpectWithOffset(1, got.GetUID()).To(Equal(uid), "%T %s was deleted and re-created", obj, obj.GetName())
	g.ExpectWithOffset(1, got.GetDeletionTimestamp().IsZero()).To(BeTrue(), "%T %s is being deleted", obj, obj.GetName())
	g.ExpectWithOffset(1, got.GetOwnerReferences()).To(BeEmpty(), "%T %s", obj, obj.GetName())
	for k := range got.GetAnnotations() {
		g.ExpectWithOffset(1, k).NotTo(HavePrefix("fleetplane.io/"), "%T %s", obj, obj.GetName())
		g.ExpectWithOffset(1, k).NotTo(HavePrefix("kubernetes-fleet.io/"), "%T %s", obj, obj.GetName())
	}
	g.ExpectWithOffset(1, got.GetLabels()).NotTo(HaveKey(placementv1beta1.PlacedLabel), "%T %s", obj, obj.GetName())
}

var _ = Describe("Objects a team's placement did not create on a member", func() {
	It("are never adopted nor deleted by default", func() {
		t := newTeam("intruder")
		ns := framework.UniqueName("platform-system")
		existingNS, existingCM := framework.Namespace(ns), framework.ConfigMap(ns, "platform-config", map[string]string{"owner": "platform"})
		preexisting("member-2", existingNS, existingCM)
		uids := uidsOn(Default, "member-2", existingNS, existingCM)

		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"team": t.Path}))
		crp := newCRP("app", pickFixed("member-2"), namespaceSelector(ns))
		t.place(crp)
		Eventually(func(g Gomega) {
			expectFailed(g, t.getCRP(g, "app"), "member-2", placementv1beta1.ApplyResultNotTakenOver,
				"already exists on this member cluster and no placement of workspace "+t.Path+" created it",
				namespaceID(ns), configMapID(ns, "settings"))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectUntouched(g, "member-2", existingNS, uids[fmt.Sprintf("%T %s/%s", existingNS, "", ns)])
			expectUntouched(g, "member-2", existingCM, uids[fmt.Sprintf("%T %s/%s", existingCM, ns, "platform-config")])
			expectGoneFrom(g, framework.ConfigMap(ns, "settings", nil), "member-2")
		}, "3s").Should(Succeed())

		By("deleting the placement")
		t.deletePlacement(crp)
		Consistently(func(g Gomega) {
			expectUntouched(g, "member-2", existingNS, uids[fmt.Sprintf("%T %s/%s", existingNS, "", ns)])
			expectUntouched(g, "member-2", existingCM, uids[fmt.Sprintf("%T %s/%s", existingCM, ns, "platform-config")])
		}, "5s").Should(Succeed())
	})

	It("are adopted where a grant allows it, and released, never deleted, with the placement", func() {
		t := newTeam("adopter")
		ns := framework.UniqueName("legacy")
		existingNS, existingCM := framework.Namespace(ns), framework.ConfigMap(ns, "legacy-config", map[string]string{"v": "member"})
		preexisting("member-3", existingNS, existingCM)
		uids := uidsOn(Default, "member-3", existingNS, existingCM)

		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("legacy")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, TakeOverNamespaces: []string{"legacy-*"},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })

		// The team places the namespace, its own new ConfigMap, and the
		// legacy ConfigMap with the team's version of it.
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"team": t.Path}), framework.ConfigMap(ns, "legacy-config", map[string]string{"v": "hub"}))
		selected := []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "legacy-config"), configMapID(ns, "settings")}
		crp := newCRP("legacy", pickFixed("member-3"), namespaceSelector(ns))
		t.place(crp)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "legacy"), []string{"member-3"}, selected, "0")
			cm := &corev1.ConfigMap{}
			g.Expect(memberClient("member-3").Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "legacy-config"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"v": "hub"}))
			g.Expect(cm.OwnerReferences).To(BeEmpty(), "an adopted object gets no owner reference the garbage collector could follow")
			g.Expect(cm.Annotations).To(HaveKey(placementv1beta1.OwnerAnnotation))
			g.Expect(cm.Annotations).NotTo(HaveKey(placementv1beta1.CreatedByAnnotation))
			g.Expect(cm.Labels).To(HaveKeyWithValue(placementv1beta1.PlacedLabel, "true"), "an adopted object is watched")
		}).Should(Succeed())
		Expect(uidsOn(Default, "member-3", existingNS, existingCM)).To(Equal(uids))

		By("deleting the placement: what it created goes, what it adopted stays")
		t.deletePlacement(crp)
		Eventually(func(g Gomega) {
			expectGoneFrom(g, framework.ConfigMap(ns, "settings", nil), "member-3")
			expectUntouched(g, "member-3", existingNS, uids[fmt.Sprintf("%T %s/%s", existingNS, "", ns)])
			expectUntouched(g, "member-3", existingCM, uids[fmt.Sprintf("%T %s/%s", existingCM, ns, "legacy-config")])
		}).Should(Succeed())
	})
})

var _ = Describe("A namespace a team placed on a member", func() {
	It("belongs to that team: another team placing into it is refused without learning whose it is, and the first team's deletion touches nothing of the second's", func() {
		a, b := newTeam("owner"), newTeam("neighbour")
		ns := framework.UniqueName("shared-ns")
		a.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "a-settings", nil))
		b.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "b-settings", nil))
		selectedA := []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "a-settings")}
		crpA := newCRP("app", pickFixed("member-1"), namespaceSelector(ns))
		a.place(crpA)
		Eventually(func(g Gomega) {
			expectAvailable(g, a.getCRP(g, "app"), []string{"member-1"}, selectedA, "0")
		}).Should(Succeed())

		By("team B placing the same namespace and its own ConfigMap in it")
		b.place(newCRP("app", pickFixed("member-1"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			crpB := b.getCRP(g, "app")
			expectFailed(g, crpB, "member-1", placementv1beta1.ApplyResultFailedToTakeOver,
				"belongs to another workspace's placements", namespaceID(ns), configMapID(ns, "b-settings"))
			for _, f := range failedOn(g, crpB, "member-1") {
				g.Expect(f.Condition.Message).NotTo(ContainSubstring(a.Path), "team B learns nothing of team A")
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectGoneFrom(g, framework.ConfigMap(ns, "b-settings", nil), "member-1")
			expectAvailable(g, a.getCRP(g, "app"), []string{"member-1"}, selectedA, "0")
		}, "3s").Should(Succeed())

		By("team A deleting its placement: its namespace goes, and nothing of team B's was ever in it")
		a.deletePlacement(crpA)
		Eventually(func(g Gomega) { expectGoneFrom(g, framework.Namespace(ns), "member-1") }).Should(Succeed())
	})
})

var _ = Describe("Two placements creating the same object at once", func() {
	DescribeTable("leave it with exactly one of them; the other reports the conflict",
		func(strategy placementv1beta1.ApplyStrategyType) {
			t := newTeam("race")
			ns, selected := t.appNamespace("race")
			var crps []*placementv1beta1.ClusterResourcePlacement
			for _, name := range []string{"first", "second"} {
				crp := newCRP(name, pickFixed("member-4"), namespaceSelector(ns))
				crp.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: strategy}
				crps = append(crps, crp)
			}
			for _, crp := range crps {
				go func() {
					defer GinkgoRecover()
					Expect(t.Client.Create(framework.Ctx(), crp)).To(Succeed())
				}()
				DeferCleanup(t.deletePlacement, crp)
			}
			Eventually(func(g Gomega) {
				var winner, loser *placementv1beta1.ClusterResourcePlacement
				for _, name := range []string{"first", "second"} {
					crp := t.getCRP(g, name)
					if conditionTrue(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType)) {
						g.Expect(winner).To(BeNil(), "both placements are Available")
						winner = crp
					} else {
						loser = crp
					}
				}
				g.Expect(winner).NotTo(BeNil(), "neither placement is Available")
				expectAvailable(g, winner, []string{"member-4"}, selected, "0")
				expectFailed(g, loser, "member-4", placementv1beta1.ApplyResultFailedToTakeOver, "placement",
					namespaceID(ns), configMapID(ns, "settings"))
				for _, o := range []client.Object{framework.Namespace(ns), framework.ConfigMap(ns, "settings", nil)} {
					g.Expect(memberClient("member-4").Get(framework.Ctx(), client.ObjectKeyFromObject(o), o)).To(Succeed())
					g.Expect(o.GetAnnotations()[placementv1beta1.OwnerAnnotation]).To(HaveSuffix("/"+winner.Name), "%T %s", o, o.GetName())
					g.Expect(o.GetOwnerReferences()).To(HaveLen(1), "%T %s", o, o.GetName())
				}
			}).Should(Succeed())
		},
		Entry("client-side apply", placementv1beta1.ApplyStrategyTypeClientSideApply),
		Entry("server-side apply", placementv1beta1.ApplyStrategyTypeServerSideApply),
	)
})

func conditionTrue(conds []metav1.Condition, t string) bool {
	return meta.IsStatusConditionTrue(conds, t)
}

// refused tells whether the hub refused a request: it forbids a team's
// service account what it may not do in a workspace of the same shard,
// and, on a sharded hub, a shard does not know a service account of
// another shard's workspace and refuses its token outright (kcp looks the
// account up in the shard's own informers).
func refused(err error) bool {
	return apierrors.IsForbidden(err) || (shards > 1 && apierrors.IsUnauthorized(err))
}

var _ = Describe("A team's identity", func() {
	It("reaches nothing outside its own workspace: not another team's, not the platform's", func() {
		a, b := newTeam("isolated-a"), newTeam("isolated-b")
		ns, _ := b.appNamespace("isolated-b")
		b.place(newCRP("app", pickFixed("member-1"), namespaceSelector(ns)))

		inB := a.clientIn(b.Path)
		for _, list := range []client.ObjectList{&corev1.NamespaceList{}, &placementv1beta1.ClusterResourcePlacementList{},
			&placementv1beta1.ClusterResourceBindingList{}, &placementv1beta1.ClusterResourceSnapshotList{}} {
			Expect(inB.List(framework.Ctx(), list)).To(Satisfy(refused), "listing %T in team B's workspace", list)
		}
		Expect(inB.Get(framework.Ctx(), client.ObjectKey{Name: "app"}, &placementv1beta1.ClusterResourcePlacement{})).To(Satisfy(refused))
		Expect(inB.Create(framework.Ctx(), newCRP("intruder", pickAll(), namespaceSelector(ns)))).To(Satisfy(refused))
		Expect(inB.Delete(framework.Ctx(), &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "app"}})).To(Satisfy(refused))

		inFleet := a.clientIn("root:fleet")
		for _, list := range []client.ObjectList{&clusterv1beta1.MemberClusterList{}, &tenancyv1alpha1.ClusterGrantList{},
			&placementv1beta1.WorkList{}, &corev1.NamespaceList{}} {
			Expect(inFleet.List(framework.Ctx(), list)).To(Satisfy(refused), "listing %T in root:fleet", list)
		}
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("rogue")},
			Spec: clusterv1beta1.MemberClusterSpec{Identity: rbacv1.Subject{Kind: "ServiceAccount", Name: "x", Namespace: "default"}}}
		Expect(inFleet.Create(framework.Ctx(), mc)).To(Satisfy(refused), "creating a MemberCluster")
		grant := &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("self-grant")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{a.Path}}}
		Expect(inFleet.Create(framework.Ctx(), grant)).To(Satisfy(refused), "granting itself clusters")

		Eventually(func(g Gomega) {
			g.Expect(b.getCRP(g, "app").Status.ObservedResourceIndex).To(Equal("0"))
		}).Should(Succeed())
	})
})
