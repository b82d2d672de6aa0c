package placement

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// Faults: each spec ends by checking that every member holds exactly what
// the placements want there (nothing lost, duplicated or left behind) and
// that the placements' statuses are current.

// placedIn lists the ConfigMaps and Deployments in a namespace of a member,
// by name, with their UIDs: what is there, and whether it was re-created.
func placedIn(g Gomega, m, ns string) map[string]types.UID {
	out := map[string]types.UID{}
	cms := &corev1.ConfigMapList{}
	g.ExpectWithOffset(1, memberClient(m).List(framework.Ctx(), cms, client.InNamespace(ns))).To(Succeed())
	for _, cm := range cms.Items {
		if cm.Name != "kube-root-ca.crt" {
			out["ConfigMap/"+cm.Name] = cm.UID
		}
	}
	deps := &appsv1.DeploymentList{}
	g.ExpectWithOffset(1, memberClient(m).List(framework.Ctx(), deps, client.InNamespace(ns))).To(Succeed())
	for _, d := range deps.Items {
		out["Deployment/"+d.Name] = d.UID
	}
	return out
}

// placedOnAll is placedIn for every member that should hold the namespace,
// failing unless each holds exactly the wanted objects.
func placedOnAll(g Gomega, ns string, clusters []string, want ...string) map[string]map[string]types.UID {
	out := map[string]map[string]types.UID{}
	want = slices.Sorted(slices.Values(want))
	for _, m := range clusters {
		got := placedIn(g, m, ns)
		g.ExpectWithOffset(1, keys(got)).To(Equal(want), "objects in %s on %s", ns, m)
		out[m] = got
	}
	return out
}

// settingsOn is the "version" the settings ConfigMap on a member holds.
func settingsOn(g Gomega, m, ns string) string {
	return configMapOn(g, m, ns, "settings").Data["version"]
}

func (t *team) setVersion(ns, version string) {
	update(t.Client, framework.ConfigMap(ns, "settings", nil), func(cm *corev1.ConfigMap) {
		cm.Data = map[string]string{"version": version}
	})
}

// slowApp is a namespace whose Deployment takes minReadySeconds to become
// available on each member after a change, so that a rolling update with
// maxUnavailable 1 crosses the fleet one member at a time, slowly enough to
// be caught in the middle.
func (t *team) slowApp(prefix string) string {
	ns := framework.UniqueName(prefix)
	dep := deployment(ns, "web", "registry.k8s.io/pause:3.10")
	dep.Spec.MinReadySeconds = 10
	t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"version": "1"}), dep)
	return ns
}

func oneAtATime(crp *placementv1beta1.ClusterResourcePlacement) *placementv1beta1.ClusterResourcePlacement {
	one := intstr.FromInt32(1)
	crp.Spec.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: &one, MaxSurge: &one, UnavailablePeriodSeconds: ptr.To(1)}
	return crp
}

var _ = Describe("A hub killed mid rolling update", Serial, func() {
	It("resumes the rollout where it was once it runs again, re-creating nothing", func() {
		t := newTeam("crash-rollout")
		ns := t.slowApp("crash")
		t.place(oneAtATime(newCRP("app", pickAll(), namespaceSelector(ns))))
		var before map[string]map[string]types.UID
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, "ClusterResourcePlacementAvailable").Status).To(Equal(metav1.ConditionTrue))
			before = placedOnAll(g, ns, allMembers(), "ConfigMap/settings", "Deployment/web")
		}).Should(Succeed())

		By("changing the app and killing the hub once the first member has the change")
		update(t.Client, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, func(d *appsv1.Deployment) {
			d.Spec.Template.Labels["version"] = "2"
		})
		versionOn := func(g Gomega, m string) string { return deploymentOn(g, m, ns, "web").Spec.Template.Labels["version"] }
		var updated []string
		Eventually(func(g Gomega) {
			updated = nil
			for _, m := range allMembers() {
				if versionOn(g, m) == "2" {
					updated = append(updated, m)
				}
			}
			g.Expect(updated).NotTo(BeEmpty())
		}).Should(Succeed())
		hub.Kill()
		Expect(len(updated)).To(BeNumerically("<", len(allMembers())), "the rollout was caught in the middle: %v", updated)
		generations := map[string]int64{}
		for _, m := range updated {
			d := deploymentOn(Default, m, ns, "web")
			generations[m] = d.Generation
		}
		Expect(hub.Start(framework.Ctx())).To(Succeed())

		By("the rollout finishes; members updated before the crash are not written again")
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			expectAvailable(g, crp, allMembers(), []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings"), deploymentID(ns, "web")}, "1")
			for _, m := range allMembers() {
				g.Expect(versionOn(g, m)).To(Equal("2"), m)
			}
			g.Expect(placedOnAll(g, ns, allMembers(), "ConfigMap/settings", "Deployment/web")).To(Equal(before), "nothing re-created")
		}).WithTimeout(4 * time.Minute).Should(Succeed())
		for m, gen := range generations {
			Expect(deploymentOn(Default, m, ns, "web").Generation).To(Equal(gen), "the Deployment on %s was updated before the crash and not again", m)
		}
	})
})

var _ = Describe("A hub killed mid staged update run", Serial, func() {
	It("resumes the run at its approval gate once it runs again", func() {
		t := newTeam("crash-staged")
		ns := framework.UniqueName("app")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}), threeStages("three", time.Second))
		t.place(externalCRP("app", ns))
		t.waitScheduled("app", "member-1", "member-2", "member-3")
		t.Create(framework.Ctx(), clusterRun("app-v0", "app", "three", "0", placementv1beta1.UpdateRunStateRun))
		var req placementv1beta1.ClusterApprovalRequest
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "app-v0-after-east"}, &req)).To(Succeed())
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "", "member-3": "blue"}))
		}).Should(Succeed())

		By("killing the hub at the gate")
		hub.Kill()
		Expect(hub.Start(framework.Ctx())).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "", "member-3": "blue"}), "the gate holds across the restart")
			run := t.getRun(g, "app-v0")
			g.Expect(framework.Condition(stageStatus(run, "east").Conditions, "Progressing").Reason).To(Equal(placementv1beta1.StageUpdatingWaitingReason))
		}, 5*time.Second).Should(Succeed())

		By("approving: the run goes on to the west stage and succeeds")
		t.approve(&req)
		Eventually(func(g Gomega) {
			run := t.getRun(g, "app-v0")
			g.Expect(runCondition(run, "Succeeded").Reason).To(Equal(placementv1beta1.UpdateRunSucceededReason), "%+v", run.Status.Conditions)
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1", "member-2", "member-3"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings")}, "0")
			placedOnAll(g, ns, []string{"member-1", "member-2", "member-3"}, "ConfigMap/settings")
			g.Expect(placedIn(g, "member-4", ns)).To(BeEmpty())
		}).Should(Succeed())
	})
})

var _ = Describe("A syncer killed and started again", Serial, func() {
	It("applies what changed meanwhile and writes nothing else again", func() {
		t := newTeam("syncer-crash")
		ns := framework.UniqueName("app")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"version": "1"}), framework.ConfigMap(ns, "stable", map[string]string{"k": "v"}))
		t.place(newCRP("app", pickFixed("member-2"), namespaceSelector(ns)))
		var stable *corev1.ConfigMap
		var before map[string]types.UID
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, "ClusterResourcePlacementAvailable").Status).To(Equal(metav1.ConditionTrue))
			before = placedOnAll(g, ns, []string{"member-2"}, "ConfigMap/settings", "ConfigMap/stable")["member-2"]
			stable = configMapOn(g, "member-2", ns, "stable")
		}).Should(Succeed())

		m2 := members.Named("member-2")
		DeferCleanup(func() { Expect(hub.WaitMemberReady(framework.Ctx(), m2.Name)).To(Succeed()) })
		By("killing member-2's syncer and changing the app meanwhile")
		Expect(m2.StopSyncer()).To(Succeed())
		t.setVersion(ns, "2")
		Consistently(func(g Gomega) {
			g.Expect(settingsOn(g, "member-2", ns)).To(Equal("1"))
		}, 3*time.Second).Should(Succeed())

		By("starting the syncer again")
		Expect(hub.Join(framework.Ctx(), m2)).To(Succeed())
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-2"},
				[]placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings"), configMapID(ns, "stable")}, "1")
			g.Expect(settingsOn(g, "member-2", ns)).To(Equal("2"))
			g.Expect(placedOnAll(g, ns, []string{"member-2"}, "ConfigMap/settings", "ConfigMap/stable")["member-2"]).To(Equal(before))
		}).Should(Succeed())
		Expect(configMapOn(Default, "member-2", ns, "stable").ResourceVersion).To(Equal(stable.ResourceVersion), "an unchanged object is not written again")
	})
})

// Serial: a grant changed by another spec would retry the waiting binding
// and hide whether the earlier Work's removal brought it back.
var _ = Describe("A cluster picked again while its earlier Work is still being removed", Serial, func() {
	It("says so, and gets its Work as soon as the earlier one is gone, not on a retry's backoff", func() {
		t := newTeam("repick")
		ns := framework.UniqueName("app")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"version": "1"}))
		t.place(newCRP("app", pickFixed("member-1", "member-2"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, "ClusterResourcePlacementAvailable").Status).To(Equal(metav1.ConditionTrue))
			placedOnAll(g, ns, []string{"member-1", "member-2"}, "ConfigMap/settings")
		}).Should(Succeed())
		works := func(g Gomega) []placementv1beta1.Work {
			list := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), list, client.InNamespace("fleet-member-member-2"),
				client.MatchingLabels{placementv1beta1.WorkspaceLabel: t.logicalCluster(g, "app")})).To(Succeed())
			return list.Items
		}

		By("unpicking member-2 while a finalizer there holds the ConfigMap: the Work waits until the syncer has removed it")
		const hold = "test.fleetplane.io/hold"
		mc := memberClient("member-2")
		cm := framework.ConfigMap(ns, "settings", nil)
		update(mc, cm, func(cm *corev1.ConfigMap) { cm.Finalizers = append(cm.Finalizers, hold) })
		released := false
		release := func() {
			update(mc, cm, func(cm *corev1.ConfigMap) { cm.Finalizers = nil })
			released = true
		}
		DeferCleanup(func() {
			if !released {
				release()
			}
		})
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) { crp.Spec.Policy = pickFixed("member-1") })
		var earlier string
		Eventually(func(g Gomega) {
			ws := works(g)
			g.Expect(ws).To(HaveLen(1))
			g.Expect(ws[0].DeletionTimestamp).NotTo(BeNil())
			earlier = ws[0].Labels[placementv1beta1.ParentBindingLabel]
		}).Should(Succeed())

		By("picking member-2 again: its new binding waits for the earlier Work, and says so")
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy = pickFixed("member-1", "member-2")
		})
		Eventually(func(g Gomega) {
			var synced metav1.Condition
			for _, pcs := range t.getCRP(g, "app").Status.PerClusterPlacementStatuses {
				if pcs.ClusterName == "member-2" {
					synced = framework.Condition(pcs.Conditions, "WorkSynchronized")
				}
			}
			g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(synced.Message).To(ContainSubstring("of an earlier binding (%s) of this placement to the cluster is still being removed", earlier))
		}).Should(Succeed())
		// Long enough for the new binding's retries to back off well past
		// the wait below.
		time.Sleep(40 * time.Second)

		By("letting the ConfigMap go: the earlier Work goes and the new one is written at once")
		release()
		Eventually(func(g Gomega) {
			for _, w := range works(g) {
				g.Expect(w.Labels[placementv1beta1.ParentBindingLabel]).NotTo(Equal(earlier))
			}
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(works(g)).To(HaveLen(1))
		}, 10*time.Second).Should(Succeed(), "the new binding's Work is written when the earlier one is gone")
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, "ClusterResourcePlacementAvailable").Status).To(Equal(metav1.ConditionTrue))
			placedOnAll(g, ns, []string{"member-1", "member-2"}, "ConfigMap/settings")
		}).Should(Succeed())
	})
})

var _ = Describe("A placement deleted before its member's syncer read its Work", Serial, func() {
	It("is removed, and the syncer, back, applies nothing and leaves the member's own objects alone", func() {
		t := newTeam("unread")
		ns := framework.UniqueName("app")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"version": "1"}))
		By("giving member-2 objects of its own by the names the placement selects")
		mc := memberClient("member-2")
		Expect(mc.Create(framework.Ctx(), framework.Namespace(ns))).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(mc.Delete(framework.Ctx(), framework.Namespace(ns)))).To(Succeed())
		})
		Expect(mc.Create(framework.Ctx(), framework.ConfigMap(ns, "settings", map[string]string{"owner": "member-2's admin"}))).To(Succeed())
		own := configMapOn(Default, "member-2", ns, "settings")

		m2 := members.Named("member-2")
		By("placing and deleting while member-2's syncer is down")
		Expect(m2.StopSyncer()).To(Succeed())
		crp := newCRP("app", pickFixed("member-2"), namespaceSelector(ns))
		t.place(crp)
		// Runs before the placement's own cleanup, which waits for it to go.
		rejoined := false
		DeferCleanup(func() {
			if !rejoined {
				Expect(hub.Join(framework.Ctx(), m2)).To(Succeed())
			}
			Expect(hub.WaitMemberReady(framework.Ctx(), m2.Name)).To(Succeed())
		})
		var workspace string
		works := func(g Gomega) []placementv1beta1.Work {
			list := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), list, client.MatchingLabels{placementv1beta1.WorkspaceLabel: workspace})).To(Succeed())
			return list.Items
		}
		Eventually(func(g Gomega) {
			workspace = t.logicalCluster(g, "app")
			g.Expect(works(g)).To(HaveLen(1), "member-2 is picked before its missed heartbeats make it unhealthy (15 s)")
		}).Should(Succeed())
		// The syncer never took the Work: nothing on member-2 can be its.
		t.deletePlacement(crp)
		Expect(works(Default)).To(BeEmpty())

		By("starting the syncer again")
		Expect(hub.Join(framework.Ctx(), m2)).To(Succeed())
		rejoined = true
		Expect(hub.WaitMemberReady(framework.Ctx(), m2.Name)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(placedIn(g, "member-2", ns)).To(HaveKey("ConfigMap/settings"))
		}, 3*time.Second).Should(Succeed())
		after := configMapOn(Default, "member-2", ns, "settings")
		Expect(after.UID).To(Equal(own.UID), "member-2's own ConfigMap is neither deleted nor re-created")
		Expect(after.ResourceVersion).To(Equal(own.ResourceVersion), "nor written")
	})
})

var _ = Describe("A member's API server down for 60 seconds", Serial, func() {
	It("is reported on the placement, retried with backoff, and caught up with when it is back, re-creating nothing", func() {
		t := newTeam("member-outage")
		ns, _ := t.appNamespace("outage")
		// With the default maxUnavailable (25%), the member that cannot
		// apply would hold the others back.
		crp := newCRP("app", pickAll(), namespaceSelector(ns))
		all := intstr.FromString("100%")
		crp.Spec.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: &all}
		t.place(crp)
		var before map[string]map[string]types.UID
		Eventually(func(g Gomega) {
			g.Expect(framework.Condition(t.getCRP(g, "app").Status.Conditions, "ClusterResourcePlacementAvailable").Status).To(Equal(metav1.ConditionTrue))
			before = placedOnAll(g, ns, allMembers(), "ConfigMap/settings")
		}).Should(Succeed())

		m3 := members.Named("member-3")
		applyErrors := func() float64 {
			ms, err := localfleet.Scrape(m3.MetricsURL())
			Expect(err).NotTo(HaveOccurred())
			n, _ := ms.Sum("fleet_work_apply_errors_total", map[string]string{"member": m3.Name})
			return n
		}
		errorsBefore := applyErrors()
		By("stopping member-3's API server and changing the app")
		Expect(m3.Cluster.StopAPIServer(framework.Ctx())).To(Succeed())
		stopped, down := time.Now(), true
		DeferCleanup(func() {
			if down {
				Expect(m3.Cluster.StartAPIServer()).To(Succeed())
			}
		})
		update(t.Client, framework.ConfigMap(ns, "settings", nil), func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"version": "2"}
		})
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				applied := framework.Condition(pcs.Conditions, "Applied")
				if pcs.ClusterName == "member-3" {
					g.Expect(applied.Status).To(Equal(metav1.ConditionFalse), "the outage shows on member-3: %+v", applied)
					g.Expect(pcs.FailedPlacements).NotTo(BeEmpty())
					for _, f := range pcs.FailedPlacements {
						g.Expect(f.Condition.Message).To(ContainSubstring("connection refused"), "each object says why: %+v", f)
					}
					continue
				}
				g.Expect(applied.Status).To(Equal(metav1.ConditionTrue), "%s: %+v", pcs.ClusterName, applied)
				g.Expect(pcs.ObservedResourceIndex).To(Equal("1"))
			}
		}).Should(Succeed())
		time.Sleep(time.Until(stopped.Add(time.Minute)))
		retries := applyErrors() - errorsBefore
		GinkgoWriter.Printf("failed applies during the outage: %v\n", retries)
		Expect(retries).To(BeNumerically("<=", 20), "retried with backoff, not at full rate")

		By("starting the API server again")
		Expect(m3.Cluster.StartAPIServer()).To(Succeed())
		down = false
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), allMembers(), []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings")}, "1")
			for _, m := range allMembers() {
				g.Expect(settingsOn(g, m, ns)).To(Equal("2"), m)
			}
			g.Expect(placedOnAll(g, ns, allMembers(), "ConfigMap/settings")).To(Equal(before), "nothing re-created")
		}).Should(Succeed())
	})
})

var _ = Describe("The hub's etcd restarted under the running hub", Serial, func() {
	It("loses nothing: the hub goes on placing and reporting", func() {
		if hubEtcd == nil {
			Skip("the hub of several shards runs each shard on its embedded etcd; the shards suite restarts shards")
		}
		t := newTeam("etcd-restart")
		ns, selected := t.appNamespace("etcd")
		t.place(newCRP("app", pickAll(), namespaceSelector(ns)))
		var before map[string]map[string]types.UID
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), allMembers(), selected, "0")
			before = placedOnAll(g, ns, allMembers(), "ConfigMap/settings")
		}).Should(Succeed())
		pid := hub.Pid()

		By("restarting etcd")
		Expect(hubEtcd.Restart(framework.Ctx())).To(Succeed())
		t.setVersion(ns, "2")
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), allMembers(), selected, "1")
			for _, m := range allMembers() {
				g.Expect(settingsOn(g, m, ns)).To(Equal("2"), m)
			}
			g.Expect(placedOnAll(g, ns, allMembers(), "ConfigMap/settings")).To(Equal(before))
		}).Should(Succeed())
		Expect(hub.Pid()).To(Equal(pid), "the hub rode out the restart")
	})
})

var _ = Describe("A member leaving a PickAll placement", Serial, func() {
	It("shrinks the placement; the member keeps what was placed, no longer managed", func() {
		t := newTeam("leave-all")
		ns, selected := t.appNamespace("leave")
		t.place(newCRP("app", pickAll(), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), allMembers(), selected, "0")
		}).Should(Succeed())

		m1 := members.Named("member-1")
		DeferCleanup(func() {
			Expect(hub.Join(framework.Ctx(), m1)).To(Succeed())
			Expect(hub.WaitMemberReady(framework.Ctx(), m1.Name)).To(Succeed())
		})
		Expect(hub.Unjoin(framework.Ctx(), m1)).To(Succeed())
		rest := []string{"member-2", "member-3", "member-4"}
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), rest, selected, "0")
			g.Expect(keys(t.activeBindings(g, "app"))).To(Equal(rest))
			placedOnAll(g, ns, allMembers(), "ConfigMap/settings")
		}).Should(Succeed())
		By("a change reaches the members that stayed only")
		t.setVersion(ns, "2")
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), rest, selected, "1")
			for _, m := range rest {
				g.Expect(settingsOn(g, m, ns)).To(Equal("2"), m)
			}
			g.Expect(configMapOn(g, "member-1", ns, "settings").Data).To(HaveKeyWithValue("team", t.Path), "member-1 keeps the last version it had")
		}).Should(Succeed())
	})
})
