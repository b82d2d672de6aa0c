package placement

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// These specs read placement status the way a tool written for KubeFleet
// does: every condition with its type, status and reason, the per-cluster
// statuses and the selected resources.

// holdFinalizer keeps an object on a member until the spec lets it go.
const holdFinalizer = "example.com/hold"

// expectExactly checks that conds hold exactly the wanted condition types,
// each "Status/Reason" as wanted and of generation gen.
func expectExactly(g Gomega, conds []metav1.Condition, gen int64, want map[string]string) {
	got := map[string]string{}
	for _, c := range conds {
		got[c.Type] = string(c.Status) + "/" + c.Reason
		g.ExpectWithOffset(1, c.ObservedGeneration).To(Equal(gen), "%s: %+v", c.Type, c)
	}
	g.ExpectWithOffset(1, got).To(Equal(want))
}

// rolloutTrue are the conditions of a rollout that completed, with KubeFleet's
// placement-level reasons, and Scheduled as given.
func rolloutTrue(prefix, scheduled string) map[string]string {
	return map[string]string{
		prefix + "Scheduled":        scheduled,
		prefix + "RolloutStarted":   "True/" + placementv1beta1.RolloutStartedReason,
		prefix + "Overridden":       "True/" + placementv1beta1.OverrideNotSpecifiedReason,
		prefix + "WorkSynchronized": "True/" + placementv1beta1.WorkSynchronizedReason,
		prefix + "Applied":          "True/" + placementv1beta1.ApplySucceededReason,
		prefix + "Available":        "True/" + placementv1beta1.AvailableReason,
	}
}

// perClusterTrue are the conditions of one cluster that runs the placement.
var perClusterTrue = map[string]string{
	"Scheduled":        "True/" + placementv1beta1.ScheduledReason,
	"RolloutStarted":   "True/" + placementv1beta1.RolloutStartedReason,
	"Overridden":       "True/" + placementv1beta1.OverrideNotSpecifiedReason,
	"WorkSynchronized": "True/" + placementv1beta1.AllWorkSyncedReason,
	"Applied":          "True/" + placementv1beta1.AllWorkAppliedReason,
	"Available":        "True/" + placementv1beta1.AllWorkAvailableReason,
}

var (
	fulfilled   = "True/" + placementv1beta1.SchedulingPolicyFulfilledReason
	unfulfilled = "False/" + placementv1beta1.SchedulingPolicyUnfulfilledReason
)

func nowhere() placementv1beta1.ClusterSelectorTerm {
	return labelTerm(map[string]string{"env": "nowhere"})
}

func pickNWhere(n int32, term placementv1beta1.ClusterSelectorTerm) *placementv1beta1.PlacementPolicy {
	p := pickN(n)
	p.Affinity = pickAll(term).Affinity
	return p
}

func newRP(ns, name string, policy *placementv1beta1.PlacementPolicy, selectors ...placementv1beta1.ResourceSelectorTerm) *placementv1beta1.ResourcePlacement {
	return &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       placementv1beta1.PlacementSpec{ResourceSelectors: selectors, Policy: policy},
	}
}

// get reads the current version of a placement.
func (t *team) get(g Gomega, p placementv1beta1.PlacementObj) placementv1beta1.PlacementObj {
	got := p.DeepCopyObject().(placementv1beta1.PlacementObj)
	g.ExpectWithOffset(1, t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(p), got)).To(Succeed())
	return got
}

// placeNamespaceOnly places a namespace, without its content, on clusters:
// a ResourcePlacement places only where its namespace is.
func (t *team) placeNamespaceOnly(ns string, clusters ...string) {
	sel := namespaceSelector(ns)
	sel.SelectionScope = placementv1beta1.NamespaceOnly
	t.place(newCRP("ns-"+ns, pickFixed(clusters...), sel))
	Eventually(func(g Gomega) {
		expectOnlyOn(g, framework.Namespace(ns), clusters...)
	}).Should(Succeed())
}

// configMapSelector selects one ConfigMap of a ResourcePlacement's namespace.
func configMapSelector(name string) placementv1beta1.ResourceSelectorTerm {
	return placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "ConfigMap", Name: name}
}

var _ = Describe("KubeFleet status: a placement that picks no cluster", func() {
	DescribeTable("shows only Scheduled, fulfilled, and no clusters",
		func(kind string, policy func() *placementv1beta1.PlacementPolicy) {
			t := newTeam("compat-none")
			ns, selected := t.appNamespace("none")
			var p placementv1beta1.PlacementObj = newCRP("app", policy(), namespaceSelector(ns))
			if kind == "RP" {
				selected = []placementv1beta1.ResourceIdentifier{configMapID(ns, "settings")}
				p = newRP(ns, "app", policy(), configMapSelector("settings"))
			}
			t.place(p)
			check := func(g Gomega) {
				got := t.get(g, p)
				st := got.GetPlacementStatus()
				expectExactly(g, st.Conditions, got.GetGeneration(), map[string]string{conditionPrefix(got) + "Scheduled": fulfilled})
				g.Expect(st.PerClusterPlacementStatuses).To(BeEmpty())
				g.Expect(st.ObservedResourceIndex).To(Equal("0"))
				g.Expect(st.SelectedResources).To(Equal(selected))
			}
			Eventually(check).Should(Succeed())
			Consistently(check, 3*time.Second).Should(Succeed())
		},
		Entry("CRP, PickAll matching no cluster", "CRP", func() *placementv1beta1.PlacementPolicy { return pickAll(nowhere()) }),
		Entry("CRP, PickFixed with no names", "CRP", func() *placementv1beta1.PlacementPolicy { return pickFixed() }),
		Entry("CRP, PickN of 0", "CRP", func() *placementv1beta1.PlacementPolicy { return pickN(0) }),
		Entry("RP, PickAll matching no cluster", "RP", func() *placementv1beta1.PlacementPolicy { return pickAll(nowhere()) }),
	)

	It("scaled from PickN 1 to 0, drops its rollout conditions with the cluster", func() {
		t := newTeam("compat-scale")
		ns, selected := t.appNamespace("scale")
		t.place(newCRP("app", pickNWhere(1, labelTerm(map[string]string{"env": "canary"})), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-3"}, selected, "0")
		}).Should(Succeed())
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy.NumberOfClusters = ptr.To[int32](0)
		})
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			expectExactly(g, crp.Status.Conditions, crp.Generation, map[string]string{"ClusterResourcePlacementScheduled": fulfilled})
			g.Expect(crp.Status.PerClusterPlacementStatuses).To(BeEmpty())
			expectGoneFrom(g, framework.Namespace(ns), "member-3")
		}).Should(Succeed())
	})
})

var _ = Describe("KubeFleet status: PickN with fewer eligible clusters than N", func() {
	DescribeTable("is Scheduled False and shows the rollout of the clusters it picked",
		func(kind string) {
			t := newTeam("compat-unfulfilled")
			ns, selected := t.appNamespace("short")
			// Only member-3 is a canary cluster.
			var p placementv1beta1.PlacementObj = newCRP("app", pickNWhere(2, labelTerm(map[string]string{"env": "canary"})), namespaceSelector(ns))
			if kind == "RP" {
				t.placeNamespaceOnly(ns, allMembers()...)
				selected = []placementv1beta1.ResourceIdentifier{configMapID(ns, "settings")}
				p = newRP(ns, "app", pickNWhere(2, labelTerm(map[string]string{"env": "canary"})), configMapSelector("settings"))
			}
			t.place(p)
			Eventually(func(g Gomega) {
				got := t.get(g, p)
				st := got.GetPlacementStatus()
				expectExactly(g, st.Conditions, got.GetGeneration(), rolloutTrue(conditionPrefix(got), unfulfilled))
				g.Expect(st.ObservedResourceIndex).To(Equal("0"))
				g.Expect(st.SelectedResources).To(Equal(selected))
				g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(2))
				var clusters []string
				for _, pcs := range st.PerClusterPlacementStatuses {
					clusters = append(clusters, pcs.ClusterName)
					if pcs.ClusterName == "" {
						expectExactly(g, pcs.Conditions, got.GetGeneration(), map[string]string{"Scheduled": "False/" + placementv1beta1.ScheduleFailedReason})
						continue
					}
					expectExactly(g, pcs.Conditions, got.GetGeneration(), perClusterTrue)
					g.Expect(pcs.ObservedResourceIndex).To(Equal("0"))
				}
				g.Expect(clusters).To(ConsistOf("member-3", ""))
				expectOnlyOn(g, framework.ConfigMap(ns, "settings", nil), "member-3")
			}).Should(Succeed())
		},
		Entry("ClusterResourcePlacement", "CRP"),
		Entry("ResourcePlacement", "RP"),
	)
})

var _ = Describe("KubeFleet status: invalid resource selectors", func() {
	DescribeTable("give Scheduled False InvalidResourceSelectors, no index, no clusters and nothing placed",
		func(kind string, selectors func(ns string) []placementv1beta1.ResourceSelectorTerm, message string) {
			t := newTeam("compat-invalid")
			ns, _ := t.appNamespace("invalid")
			var p placementv1beta1.PlacementObj = newCRP("app", pickAll(), selectors(ns)...)
			if kind == "RP" {
				p = newRP(ns, "app", pickAll(), selectors(ns)...)
			}
			t.place(p)
			check := func(g Gomega) {
				got := t.get(g, p)
				st := got.GetPlacementStatus()
				prefix := conditionPrefix(got)
				expectExactly(g, st.Conditions, got.GetGeneration(), map[string]string{prefix + "Scheduled": "False/" + placementv1beta1.InvalidResourceSelectorsReason})
				g.Expect(framework.Condition(st.Conditions, prefix+"Scheduled").Message).To(ContainSubstring(message))
				g.Expect(st.ObservedResourceIndex).To(BeEmpty())
				g.Expect(st.PerClusterPlacementStatuses).To(BeEmpty())
				g.Expect(st.SelectedResources).To(BeEmpty())
				bindings := &placementv1beta1.ClusterResourceBindingList{}
				g.Expect(t.Client.List(framework.Ctx(), bindings)).To(Succeed())
				g.Expect(bindings.Items).To(BeEmpty())
				expectGoneFrom(g, framework.ConfigMap(ns, "settings", nil), allMembers()...)
			}
			Eventually(check).Should(Succeed())
			Consistently(check, 3*time.Second).Should(Succeed())
		},
		Entry("CRP: the same selector twice", "CRP", func(ns string) []placementv1beta1.ResourceSelectorTerm {
			return []placementv1beta1.ResourceSelectorTerm{namespaceSelector(ns), namespaceSelector(ns)}
		}, "resourceSelectors[0] and resourceSelectors[1] are the same selector"),
		Entry("CRP: a kube- namespace", "CRP", func(ns string) []placementv1beta1.ResourceSelectorTerm {
			return []placementv1beta1.ResourceSelectorTerm{namespaceSelector(ns), namespaceSelector("kube-system")}
		}, "resourceSelectors[1] selects namespace kube-system, which is reserved"),
		Entry("CRP: a fleet- namespace", "CRP", func(ns string) []placementv1beta1.ResourceSelectorTerm {
			return []placementv1beta1.ResourceSelectorTerm{namespaceSelector("fleet-system")}
		}, "resourceSelectors[0] selects namespace fleet-system, which is reserved"),
		Entry("RP: the same selector twice", "RP", func(string) []placementv1beta1.ResourceSelectorTerm {
			return []placementv1beta1.ResourceSelectorTerm{configMapSelector("settings"), configMapSelector("settings")}
		}, "are the same selector (ConfigMap named settings)"),
	)
})

var _ = Describe("KubeFleet status: selected resources", func() {
	// KubeFleet's order: namespaces, then by kind (Secret before ConfigMap
	// before Role), then by name; PersistentVolumeClaims stay behind.
	It("are listed in KubeFleet's order, without PersistentVolumeClaims, by a CRP and an RP", func() {
		t := newTeam("compat-order")
		ns := framework.UniqueName("order")
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"}, StringData: map[string]string{"k": "v"}}
		t.Create(framework.Ctx(), framework.Namespace(ns), role, framework.ConfigMap(ns, "b-settings", nil), pvc, framework.ConfigMap(ns, "a-settings", nil), secret)

		secretID := placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "Secret", Namespace: ns, Name: "token"}
		roleID := placementv1beta1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Namespace: ns, Name: "reader"}
		inNamespace := []placementv1beta1.ResourceIdentifier{secretID, configMapID(ns, "a-settings"), configMapID(ns, "b-settings"), roleID}

		crp := newCRP("app", pickFixed("member-1"), namespaceSelector(ns))
		t.place(crp)
		Eventually(func(g Gomega) {
			got := t.getCRP(g, "app")
			expectAvailable(g, got, []string{"member-1"}, append([]placementv1beta1.ResourceIdentifier{namespaceID(ns)}, inNamespace...), "0")
			g.Expect(got.Status.SelectedResources).To(Equal(append([]placementv1beta1.ResourceIdentifier{namespaceID(ns)}, inNamespace...)))
			expectOnlyOn(g, role, "member-1")
			expectGoneFrom(g, pvc, allMembers()...)
		}).Should(Succeed())

		// The CRP above holds these objects: the RP picks no cluster, so
		// that only its selection is read.
		rp := newRP(ns, "app", pickAll(nowhere()),
			placementv1beta1.ResourceSelectorTerm{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
			placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "ConfigMap"},
			placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "Secret"})
		t.place(rp)
		Eventually(func(g Gomega) {
			got := t.get(g, rp)
			g.Expect(got.GetPlacementStatus().SelectedResources).To(Equal(inNamespace))
		}).Should(Succeed())

		By("selecting PersistentVolumeClaims by kind is refused")
		bad := newRP(ns, "claims", pickFixed("member-1"), placementv1beta1.ResourceSelectorTerm{Version: "v1", Kind: "PersistentVolumeClaim"})
		t.place(bad)
		Eventually(func(g Gomega) {
			c := framework.Condition(t.get(g, bad).GetPlacementStatus().Conditions, "ResourcePlacementScheduled")
			g.Expect(c.Reason).To(Equal(placementv1beta1.InvalidResourceSelectorsReason))
			g.Expect(c.Message).To(ContainSubstring("PersistentVolumeClaim cannot be placed"))
		}).Should(Succeed())
	})
})

var _ = Describe("KubeFleet status: an object another placement placed", func() {
	DescribeTable("is not taken over: FailedToTakeOver, at the member object's generation",
		func(kind string) {
			t := newTeam("compat-takeover")
			ns, _ := t.appNamespace("taken")
			var first, second placementv1beta1.PlacementObj = newCRP("first", pickFixed("member-2"), namespaceSelector(ns)), newCRP("second", pickFixed("member-2"), namespaceSelector(ns))
			if kind == "RP" {
				t.placeNamespaceOnly(ns, "member-2")
				first, second = newRP(ns, "first", pickFixed("member-2"), configMapSelector("settings")), newRP(ns, "second", pickFixed("member-2"), configMapSelector("settings"))
			}
			t.place(first)
			Eventually(func(g Gomega) {
				expectOnlyOn(g, framework.ConfigMap(ns, "settings", nil), "member-2")
				g.Expect(framework.Condition(t.get(g, first).GetPlacementStatus().Conditions, conditionPrefix(first)+"Available").Status).To(Equal(metav1.ConditionTrue))
			}).Should(Succeed())
			t.place(second)
			Eventually(func(g Gomega) {
				got := t.get(g, second)
				st := got.GetPlacementStatus()
				prefix := conditionPrefix(got)
				expectExactly(g, st.Conditions, got.GetGeneration(), map[string]string{
					prefix + "Scheduled":        fulfilled,
					prefix + "RolloutStarted":   "True/" + placementv1beta1.RolloutStartedReason,
					prefix + "Overridden":       "True/" + placementv1beta1.OverrideNotSpecifiedReason,
					prefix + "WorkSynchronized": "True/" + placementv1beta1.WorkSynchronizedReason,
					prefix + "Applied":          "False/" + placementv1beta1.ApplyFailedReason,
				})
				g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(1))
				pcs := st.PerClusterPlacementStatuses[0]
				expectExactly(g, pcs.Conditions, got.GetGeneration(), map[string]string{
					"Scheduled":        "True/" + placementv1beta1.ScheduledReason,
					"RolloutStarted":   "True/" + placementv1beta1.RolloutStartedReason,
					"Overridden":       "True/" + placementv1beta1.OverrideNotSpecifiedReason,
					"WorkSynchronized": "True/" + placementv1beta1.AllWorkSyncedReason,
					"Applied":          "False/" + placementv1beta1.WorkNotAppliedReason,
				})
				g.Expect(pcs.FailedPlacements).NotTo(BeEmpty())
				for _, f := range pcs.FailedPlacements {
					g.Expect(f.Condition.Type).To(Equal(placementv1beta1.WorkConditionTypeApplied))
					g.Expect(f.Condition.Status).To(Equal(metav1.ConditionFalse))
					g.Expect(f.Condition.Reason).To(Equal(placementv1beta1.ApplyResultFailedToTakeOver), "%+v", f)
					// ConfigMaps and Namespaces keep no generation.
					g.Expect(f.Condition.ObservedGeneration).To(BeZero(), "%+v", f)
				}
			}).Should(Succeed())
		},
		Entry("ClusterResourcePlacement", "CRP"),
		Entry("ResourcePlacement", "RP"),
	)
})

var _ = Describe("KubeFleet status: member agent conditions", func() {
	It("use KubeFleet's member agent reasons", func() {
		Eventually(func(g Gomega) {
			for _, m := range []string{"member-1", "member-2"} {
				mc := framework.MemberCluster(g, fleetClient(), m)
				var agent *clusterv1beta1.AgentStatus
				for i := range mc.Status.AgentStatus {
					if mc.Status.AgentStatus[i].Type == clusterv1beta1.MemberAgent {
						agent = &mc.Status.AgentStatus[i]
					}
				}
				g.Expect(agent).NotTo(BeNil(), m)
				g.Expect(framework.Condition(agent.Conditions, clusterv1beta1.AgentJoined).Reason).To(Equal(clusterv1beta1.ReasonInternalMemberClusterJoined), m)
				g.Expect(framework.Condition(agent.Conditions, clusterv1beta1.AgentHealthy).Reason).To(Equal(clusterv1beta1.ReasonInternalMemberClusterHealthy), m)
				g.Expect(framework.Condition(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined).Reason).To(Equal(clusterv1beta1.ReasonMemberClusterJoined), m)
			}
		}).Should(Succeed())
	})
})

// memberWorks lists the Works of a workspace's placements for one member.
func memberWorks(g Gomega, workspace, member string) []placementv1beta1.Work {
	works := &placementv1beta1.WorkList{}
	g.ExpectWithOffset(1, worksClient().List(framework.Ctx(), works, client.InNamespace("fleet-member-"+member),
		client.MatchingLabels{placementv1beta1.WorkspaceLabel: workspace})).To(Succeed())
	return works.Items
}

// hold puts holdFinalizer on a member's object, and lets go of it when the
// spec ends.
func hold(member string, obj client.Object) {
	c := memberClient(member)
	update(c, obj, func(o client.Object) { controllerutil.AddFinalizer(o, holdFinalizer) })
	DeferCleanup(release, member, obj)
}

func release(member string, obj client.Object) {
	c := memberClient(member)
	EventuallyWithOffset(1, func() error {
		if err := c.Get(framework.Ctx(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !controllerutil.RemoveFinalizer(obj, holdFinalizer) {
			return nil
		}
		return c.Update(framework.Ctx(), obj)
	}).Should(Succeed())
}

var _ = Describe("KubeFleet semantics: a Work goes only once the member deleted what it placed", func() {
	It("keeps the Work of an unpicked cluster, and a deleted placement, until objects held by finalizers are gone", func() {
		t := newTeam("compat-deletion")
		ns, selected := t.appNamespace("held")
		t.place(newCRP("app", pickFixed("member-1", "member-2"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "app"), []string{"member-1", "member-2"}, selected, "0")
		}).Should(Succeed())
		ws := t.logicalCluster(Default, "app")

		By("unpicking member-2 while its ConfigMap is held by a finalizer")
		held := framework.ConfigMap(ns, "settings", nil)
		hold("member-2", held)
		t.updateCRP("app", func(crp *placementv1beta1.ClusterResourcePlacement) {
			crp.Spec.Policy.ClusterNames = []string{"member-1"}
		})
		// As in KubeFleet, the status shows the clusters the placement uses;
		// Fleetplane names the others, still being cleaned up, in an event.
		// The event names every cluster still being cleaned up at the time:
		// the one asked for may come with another.
		pending := func(g Gomega, cluster string) {
			g.ExpectWithOffset(1, t.eventMessages(g, "ClusterResourcePlacement", "", "app", placementv1beta1.PlacementRemovalPendingEventReason)).
				To(ContainElement(MatchRegexp(`\((.*, )?%s(, .*)?\): each goes once its member has deleted them`, cluster)))
		}
		workHeld := func(g Gomega, member string) {
			works := memberWorks(g, ws, member)
			g.ExpectWithOffset(1, works).To(HaveLen(1))
			w := works[0]
			g.ExpectWithOffset(1, w.DeletionTimestamp.IsZero()).To(BeFalse(), "Work %s is deleted", w.Name)
			g.ExpectWithOffset(1, w.Finalizers).To(ContainElement(placementv1beta1.WorkFinalizer))
			c := framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeRemoved)
			g.ExpectWithOffset(1, c.Reason).To(Equal(placementv1beta1.WorkRemovalPendingReason), "%+v", c)
			g.ExpectWithOffset(1, c.Message).To(ContainSubstring("ConfigMap " + ns + "/settings (finalizers: " + holdFinalizer + ")"))
		}
		Eventually(func(g Gomega) {
			pending(g, "member-2")
			workHeld(g, "member-2")
			crp := t.getCRP(g, "app")
			expectAvailable(g, crp, []string{"member-1"}, selected, "0")
			expectExactly(g, crp.Status.Conditions, crp.Generation, rolloutTrue("ClusterResourcePlacement", fulfilled))
		}).Should(Succeed())
		Consistently(func(g Gomega) { workHeld(g, "member-2") }, 3*time.Second).Should(Succeed())

		release("member-2", held)
		Eventually(func(g Gomega) {
			g.Expect(memberWorks(g, ws, "member-2")).To(BeEmpty())
			expectGoneFrom(g, held, "member-2")
			crp := t.getCRP(g, "app")
			expectAvailable(g, crp, []string{"member-1"}, selected, "0")
			expectExactly(g, crp.Status.Conditions, crp.Generation, rolloutTrue("ClusterResourcePlacement", fulfilled))
		}).Should(Succeed())

		By("deleting the placement while member-1 holds its ConfigMap")
		hold("member-1", held)
		crp := t.getCRP(Default, "app")
		Expect(t.Client.Delete(framework.Ctx(), crp)).To(Succeed())
		Eventually(func(g Gomega) {
			got := t.getCRP(g, "app")
			g.Expect(got.DeletionTimestamp.IsZero()).To(BeFalse())
			pending(g, "member-1")
			workHeld(g, "member-1")
		}).Should(Succeed())
		Consistently(func(g Gomega) { t.getCRP(g, "app") }, 3*time.Second).Should(Succeed())

		release("member-1", held)
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(crp), crp))).To(BeTrue())
			expectGoneFrom(g, held, "member-1")
			g.Expect(memberWorks(g, ws, "member-1")).To(BeEmpty())
		}).Should(Succeed())
	})

	It("keeps a ResourcePlacement's Work of an unpicked cluster until the member deleted its objects", func() {
		t := newTeam("compat-rp-deletion")
		ns, _ := t.appNamespace("rpheld")
		t.placeNamespaceOnly(ns, "member-1", "member-2")
		rp := newRP(ns, "app", pickFixed("member-1", "member-2"), configMapSelector("settings"))
		t.place(rp)
		held := framework.ConfigMap(ns, "settings", nil)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.get(g, rp), []string{"member-1", "member-2"}, []placementv1beta1.ResourceIdentifier{configMapID(ns, "settings")}, "0")
		}).Should(Succeed())
		hold("member-2", held)
		update(t.Client, rp, func(p *placementv1beta1.ResourcePlacement) { p.Spec.Policy.ClusterNames = []string{"member-1"} })
		Eventually(func(g Gomega) {
			g.Expect(t.eventMessages(g, "ResourcePlacement", ns, "app", placementv1beta1.PlacementRemovalPendingEventReason)).
				To(ContainElement(ContainSubstring("(member-2)")))
			expectAvailable(g, t.get(g, rp), []string{"member-1"}, []placementv1beta1.ResourceIdentifier{configMapID(ns, "settings")}, "0")
			live := &corev1.ConfigMap{}
			g.Expect(memberClient("member-2").Get(framework.Ctx(), client.ObjectKeyFromObject(held), live)).To(Succeed())
			g.Expect(live.DeletionTimestamp.IsZero()).To(BeFalse())
			bindings := &placementv1beta1.ResourceBindingList{}
			g.Expect(t.Client.List(framework.Ctx(), bindings, client.InNamespace(ns), client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: "app"})).To(Succeed())
			g.Expect(bindings.Items).To(HaveLen(2), "the binding of member-2 waits for its Work")
		}).Should(Succeed())
		release("member-2", held)
		Eventually(func(g Gomega) {
			got := t.get(g, rp)
			expectAvailable(g, got, []string{"member-1"}, []placementv1beta1.ResourceIdentifier{configMapID(ns, "settings")}, "0")
			expectGoneFrom(g, held, "member-2")
		}).Should(Succeed())
	})
})
