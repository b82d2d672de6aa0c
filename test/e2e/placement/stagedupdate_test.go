package placement

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// externalCRP places a namespace on the canary and prod clusters (members
// 1-3) and leaves the rollout to update runs.
func externalCRP(name, ns string) *placementv1beta1.ClusterResourcePlacement {
	crp := newCRP(name, pickAll(placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "canary"}}},
	}}), namespaceSelector(ns))
	crp.Spec.Strategy.Type = placementv1beta1.ExternalRolloutStrategyType
	return crp
}

func stage(name string, labels map[string]string) placementv1beta1.StageConfig {
	return placementv1beta1.StageConfig{Name: name, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}
}

func timedWait(d time.Duration) placementv1beta1.StageTask {
	return placementv1beta1.StageTask{Type: placementv1beta1.StageTaskTypeTimedWait, WaitTime: &metav1.Duration{Duration: d}}
}

var approvalTask = placementv1beta1.StageTask{Type: placementv1beta1.StageTaskTypeApproval}

// threeStages updates the canary cluster, then waits; then the eastern
// prod cluster, then waits for an approval; then the western one.
func threeStages(name string, wait time.Duration) *placementv1beta1.ClusterStagedUpdateStrategy {
	canary, east, west := stage("canary", map[string]string{"env": "canary"}), stage("east", map[string]string{"env": "prod", "region": "eastus"}),
		stage("west", map[string]string{"env": "prod", "region": "westus"})
	canary.AfterStageTasks = []placementv1beta1.StageTask{timedWait(wait)}
	east.AfterStageTasks = []placementv1beta1.StageTask{approvalTask}
	return &placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{canary, east, west}}}
}

func clusterRun(name, placement, strategy, index string, state placementv1beta1.UpdateRunState) *placementv1beta1.ClusterStagedUpdateRun {
	return &placementv1beta1.ClusterStagedUpdateRun{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.UpdateRunSpec{PlacementName: placement, StagedUpdateStrategyName: strategy, ResourceSnapshotIndex: index, State: state}}
}

func (t *team) getRun(g Gomega, name string) *placementv1beta1.ClusterStagedUpdateRun {
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	g.ExpectWithOffset(1, t.Client.Get(framework.Ctx(), client.ObjectKey{Name: name}, run)).To(Succeed())
	return run
}

func (t *team) setRunState(name string, state placementv1beta1.UpdateRunState) {
	update(t.Client, &placementv1beta1.ClusterStagedUpdateRun{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(r *placementv1beta1.ClusterStagedUpdateRun) {
		r.Spec.State = state
	})
}

// approve approves an approval request the way the seeds show: a merge
// patch of its status.
func (t *team) approve(req client.Object) {
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Approved","status":"True","reason":"lgtm","message":"lgtm","lastTransitionTime":%q,"observedGeneration":1}]}}`,
		time.Now().UTC().Format(time.RFC3339))
	ExpectWithOffset(1, t.Client.Status().Patch(framework.Ctx(), req, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// colorOn is the "color" of the ConfigMap on a member, "" if it is absent.
func colorOn(g Gomega, m, ns string) string {
	cm := &corev1.ConfigMap{}
	err := memberClient(m).Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm)
	if apierrors.IsNotFound(err) {
		return ""
	}
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cm.Data["color"]
}

func colors(g Gomega, ns string) map[string]string {
	return map[string]string{"member-1": colorOn(g, "member-1", ns), "member-2": colorOn(g, "member-2", ns), "member-3": colorOn(g, "member-3", ns)}
}

func stageStatus(run placementv1beta1.UpdateRunObj, name string) placementv1beta1.StageUpdatingStatus {
	for _, s := range run.GetUpdateRunStatus().StagesStatus {
		if s.StageName == name {
			return s
		}
	}
	return placementv1beta1.StageUpdatingStatus{StageName: name}
}

func runCondition(run placementv1beta1.UpdateRunObj, t string) metav1.Condition {
	return framework.Condition(run.GetUpdateRunStatus().Conditions, t)
}

// waitScheduled waits until the scheduler has picked the clusters of an
// External placement: a run plans with the clusters scheduled when it starts.
func (t *team) waitScheduled(name string, clusters ...string) {
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(keys(t.activeBindings(g, name))).To(ConsistOf(clusters))
	}).Should(Succeed())
}

// settingsColor sets the ConfigMap's color on the hub: a new resource snapshot.
func (t *team) settingsColor(ns, color string) {
	update(t.Client, framework.ConfigMap(ns, "settings", nil), func(cm *corev1.ConfigMap) {
		cm.Data = map[string]string{"color": color}
	})
	Eventually(func(g Gomega) {
		g.Expect(t.getCRP(g, "app").Status.SelectedResources).NotTo(BeEmpty())
	}).Should(Succeed())
}

var _ = Describe("Staged update runs", func() {
	It("roll a placement out stage by stage: TimedWait and Approval gates, observed per stage and per cluster", func() {
		t := newTeam("staged")
		ns := framework.UniqueName("app")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}), threeStages("three", 8*time.Second))
		t.place(externalCRP("app", ns))

		By("an External placement is scheduled but rolls out nothing by itself")
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "app")
			g.Expect(framework.Condition(crp.Status.Conditions, "ClusterResourcePlacementScheduled").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(crp.Status.PerClusterPlacementStatuses).To(HaveLen(3))
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				c := framework.Condition(pcs.Conditions, "RolloutStarted")
				g.Expect(c.Status).To(Equal(metav1.ConditionUnknown), "RolloutStarted on %s", pcs.ClusterName)
				g.Expect(c.Reason).To(Equal(placementv1beta1.RolloutStartedUnknownReason))
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "", "member-2": "", "member-3": ""}))
		}, 3*time.Second).Should(Succeed())

		By("the run freezes its plan and updates the canary stage first")
		t.Create(framework.Ctx(), clusterRun("app-v0", "app", "three", "0", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			run := t.getRun(g, "app-v0")
			st := run.Status
			g.Expect(runCondition(run, "Initialized").Reason).To(Equal(placementv1beta1.UpdateRunInitializeSucceededReason))
			g.Expect(st.PolicySnapshotIndexUsed).To(Equal("0"))
			g.Expect(st.PolicyObservedClusterCount).To(Equal(3))
			g.Expect(st.ResourceSnapshotIndexUsed).To(Equal("0"))
			g.Expect(st.UpdateStrategySnapshot.Stages).To(HaveLen(3))
			g.Expect(st.DeletionStageStatus.StageName).To(Equal("kubernetes-fleet.io/deleteStage"), "KubeFleet names the deletion stage so")
			var plan []string
			for _, s := range st.StagesStatus {
				for _, c := range s.Clusters {
					plan = append(plan, s.StageName+"/"+c.ClusterName)
				}
			}
			g.Expect(plan).To(Equal([]string{"canary/member-3", "east/member-1", "west/member-2"}))
			g.Expect(stageStatus(run, "east").AfterStageTaskStatus[0].ApprovalRequestName).To(Equal("app-v0-after-east"))

			canary := stageStatus(run, "canary")
			g.Expect(framework.Condition(canary.Clusters[0].Conditions, "Succeeded").Reason).To(Equal(placementv1beta1.ClusterUpdatingSucceededReason))
			g.Expect(framework.Condition(canary.Conditions, "Progressing").Reason).To(Equal(placementv1beta1.StageUpdatingWaitingReason), "canary waits %s", "8s")
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "", "member-2": "", "member-3": "blue"}))
		}).Should(Succeed())

		By("after the wait, the east stage updates and waits for its approval request")
		var req placementv1beta1.ClusterApprovalRequest
		Eventually(func(g Gomega) {
			run := t.getRun(g, "app-v0")
			canary := stageStatus(run, "canary")
			g.Expect(framework.Condition(canary.Conditions, "Succeeded").Reason).To(Equal(placementv1beta1.StageUpdatingSucceededReason))
			g.Expect(framework.Condition(canary.AfterStageTaskStatus[0].Conditions, "WaitTimeElapsed").Reason).To(Equal(placementv1beta1.AfterStageTaskWaitTimeElapsedReason))
			g.Expect(canary.EndTime.Sub(canary.StartTime.Time)).To(BeNumerically(">=", 8*time.Second))
			east := stageStatus(run, "east")
			g.Expect(framework.Condition(east.Conditions, "Progressing").Reason).To(Equal(placementv1beta1.StageUpdatingWaitingReason))
			g.Expect(framework.Condition(east.AfterStageTaskStatus[0].Conditions, "ApprovalRequestCreated").Reason).To(Equal(placementv1beta1.AfterStageTaskApprovalRequestCreatedReason))
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "app-v0-after-east"}, &req)).To(Succeed())
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "", "member-3": "blue"}))
		}).Should(Succeed())
		Expect(req.Spec).To(Equal(placementv1beta1.ApprovalRequestSpec{TargetUpdateRun: "app-v0", TargetStage: "east"}))
		Expect(req.Labels).To(Equal(map[string]string{
			placementv1beta1.TargetUpdateRunLabel: "app-v0", placementv1beta1.TargetUpdatingStageNameLabel: "east",
			placementv1beta1.TaskTypeLabel: placementv1beta1.AfterStageTaskLabelValue, placementv1beta1.IsLatestUpdateRunApprovalLabel: "true",
		}))
		Consistently(func(g Gomega) {
			g.Expect(colorOn(g, "member-2", ns)).To(BeEmpty(), "the west stage waits for the approval")
		}, 3*time.Second).Should(Succeed())
		forged := &placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "app-v0-after-west"},
			Spec: placementv1beta1.ApprovalRequestSpec{TargetUpdateRun: "app-v0", TargetStage: "west"}}
		Expect(apierrors.IsForbidden(t.Client.Create(framework.Ctx(), forged))).To(BeTrue(), "approval requests are the runs' to create")

		By("the team approves; the west stage updates and the run succeeds")
		t.approve(&req)
		Eventually(func(g Gomega) {
			run := t.getRun(g, "app-v0")
			g.Expect(runCondition(run, "Succeeded").Reason).To(Equal(placementv1beta1.UpdateRunSucceededReason), "%+v", run.Status.Conditions)
			g.Expect(runCondition(run, "Progressing").Reason).To(Equal(placementv1beta1.UpdateRunStartedReason))
			east := stageStatus(run, "east")
			g.Expect(framework.Condition(east.AfterStageTaskStatus[0].Conditions, "ApprovalRequestApproved").Reason).To(Equal(placementv1beta1.AfterStageTaskApprovalRequestApprovedReason))
			g.Expect(framework.Condition(run.Status.DeletionStageStatus.Conditions, "Succeeded").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(&req), &req)).To(Succeed())
			g.Expect(framework.Condition(req.Status.Conditions, placementv1beta1.ApprovalRequestConditionApprovalAccepted).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
			crp := t.getCRP(g, "app")
			expectAvailable(g, crp, []string{"member-1", "member-2", "member-3"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings")}, "0")
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				g.Expect(framework.Condition(pcs.Conditions, "RolloutStarted").Message).To(HaveSuffix("clusterStagedUpdateRun: app-v0"), "on %s", pcs.ClusterName)
			}
		}).Should(Succeed())

		By("deleting the run deletes its approval requests and leaves the placement as it is")
		Expect(t.Client.Delete(framework.Ctx(), t.getRun(Default, "app-v0"))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(&req), &req))
		}).Should(BeTrue())
		Consistently(func(g Gomega) {
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
		}, 2*time.Second).Should(Succeed())
	})

	It("stop and resume, then roll back by running an older resource snapshot", func() {
		t := newTeam("staged-stop")
		ns := framework.UniqueName("app")
		all := stage("all", nil)
		all.LabelSelector = &metav1.LabelSelector{}
		all.MaxConcurrency = ptr.To(intstr.FromString("100%"))
		canary := stage("canary", map[string]string{"env": "canary"})
		canary.AfterStageTasks = []placementv1beta1.StageTask{approvalTask}
		prod := stage("prod", map[string]string{"env": "prod"})
		prod.MaxConcurrency = ptr.To(intstr.FromInt32(2))
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}),
			&placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "gated"},
				Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{canary, prod}}})
		t.place(externalCRP("app", ns))
		t.waitScheduled("app", "member-1", "member-2", "member-3")
		t.Create(framework.Ctx(), clusterRun("v0", "app", "gated", "", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "v0-after-canary"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
		}).Should(Succeed())
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "v0-after-canary"}})
		Eventually(func(g Gomega) {
			g.Expect(runCondition(t.getRun(g, "v0"), "Succeeded").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
		}).Should(Succeed())

		By("a run left in Initialize plans but does not roll out")
		t.settingsColor(ns, "green")
		Eventually(func(g Gomega) {
			g.Expect(t.getCRP(g, "app").Status.ObservedResourceIndex).To(Equal("1"))
		}).Should(Succeed())
		t.Create(framework.Ctx(), clusterRun("v1", "app", "gated", "1", placementv1beta1.UpdateRunStateInitialize))
		Eventually(func(g Gomega) {
			run := t.getRun(g, "v1")
			g.Expect(runCondition(run, "Initialized").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(runCondition(run, "Progressing").Reason).To(Equal(placementv1beta1.UpdateRunNotStartedReason))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(colorOn(g, "member-3", ns)).To(Equal("blue"))
		}, 2*time.Second).Should(Succeed())

		By("run, then stop while the canary stage waits for approval: an approval does not move a stopped run")
		t.setRunState("v1", placementv1beta1.UpdateRunStateRun)
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "v1-after-canary"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "green"}))
		}).Should(Succeed())
		t.setRunState("v1", placementv1beta1.UpdateRunStateStop)
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "v1-after-canary"}})
		Eventually(func(g Gomega) {
			run := t.getRun(g, "v1")
			g.Expect(runCondition(run, "Progressing").Reason).To(Equal(placementv1beta1.UpdateRunStoppedReason))
			g.Expect(framework.Condition(stageStatus(run, "canary").Conditions, "Succeeded").Status).To(Equal(metav1.ConditionTrue), "the gate itself passes")
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "green"}))
		}, 3*time.Second).Should(Succeed())

		By("resuming finishes the prod stage, two clusters at a time")
		t.setRunState("v1", placementv1beta1.UpdateRunStateRun)
		Eventually(func(g Gomega) {
			run := t.getRun(g, "v1")
			g.Expect(runCondition(run, "Succeeded").Reason).To(Equal(placementv1beta1.UpdateRunSucceededReason))
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "green", "member-2": "green", "member-3": "green"}))
		}).Should(Succeed())

		By("rolling back: a run of snapshot 0 puts the old content back, stage by stage")
		t.Create(framework.Ctx(), clusterRun("rollback", "app", "gated", "0", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "rollback-after-canary"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "green", "member-2": "green", "member-3": "blue"}))
		}).Should(Succeed())
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "rollback-after-canary"}})
		Eventually(func(g Gomega) {
			g.Expect(runCondition(t.getRun(g, "rollback"), "Succeeded").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
			crp := t.getCRP(g, "app")
			g.Expect(crp.Status.ObservedResourceIndex).To(Equal("1"), "the latest snapshot is still 1")
			for _, pcs := range crp.Status.PerClusterPlacementStatuses {
				g.Expect(pcs.ObservedResourceIndex).To(Equal("0"), "%s serves snapshot 0", pcs.ClusterName)
			}
		}).Should(Succeed())
	})

	It("fail with a clear reason when the scheduled clusters change mid-run, and refuse strategies that do not fit", func() {
		t := newTeam("staged-fail")
		ns := framework.UniqueName("app")
		key := framework.UniqueName("staged")
		crp := newCRP("app", pickAll(labelTerm(map[string]string{key: "in"})), namespaceSelector(ns))
		crp.Spec.Strategy.Type = placementv1beta1.ExternalRolloutStrategyType
		first := stage("first", map[string]string{key: "in", "env": "prod"})
		first.AfterStageTasks = []placementv1beta1.StageTask{approvalTask}
		rest := stage("rest", map[string]string{key: "in"})
		rest.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}
		overlapping := stage("everything", nil)
		overlapping.LabelSelector = &metav1.LabelSelector{}
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}),
			&placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "two"}, Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{first, rest}}},
			&placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "overlap"}, Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{first, overlapping}}})
		labelMember := func(name, value string) {
			update(fleetClient(), &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(mc *clusterv1beta1.MemberCluster) {
				if value == "" {
					delete(mc.Labels, key)
				} else {
					mc.Labels[key] = value
				}
			})
		}
		for _, m := range []string{"member-1", "member-3", "member-4"} {
			labelMember(m, "in")
			DeferCleanup(labelMember, m, "")
		}
		t.place(crp)
		t.waitScheduled("app", "member-1", "member-3", "member-4")

		By("a strategy whose stages overlap is refused at initialization, naming the cluster and stages")
		t.Create(framework.Ctx(), clusterRun("bad", "app", "overlap", "", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			run := t.getRun(g, "bad")
			c := runCondition(run, "Initialized")
			g.Expect(c.Reason).To(Equal(placementv1beta1.UpdateRunInitializeFailedReason))
			g.Expect(c.Message).To(ContainSubstring(`cluster "member-1" is selected by both stage "first" and stage "everything"`))
			g.Expect(runCondition(run, "Succeeded").Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("a cluster joining the placement mid-run fails the run")
		t.Create(framework.Ctx(), clusterRun("run", "app", "two", "", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "run-after-first"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
			g.Expect(colorOn(g, "member-1", ns)).To(Equal("blue"))
		}).Should(Succeed())

		By("a concurrent run of the same placement must use the same strategy")
		single := stage("all", map[string]string{key: "in"})
		t.Create(framework.Ctx(), &placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "single"}, Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{single}}},
			clusterRun("other", "app", "single", "", placementv1beta1.UpdateRunStateRun), clusterRun("same", "app", "two", "", placementv1beta1.UpdateRunStateInitialize))
		Eventually(func(g Gomega) {
			c := runCondition(t.getRun(g, "other"), "Initialized")
			g.Expect(c.Reason).To(Equal(placementv1beta1.UpdateRunInitializeFailedReason))
			g.Expect(c.Message).To(ContainSubstring(`ClusterStagedUpdateRun "run" is still rolling out ClusterResourcePlacement "app" with a different strategy`))
			g.Expect(runCondition(t.getRun(g, "same"), "Initialized").Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		labelMember("member-2", "in")
		DeferCleanup(labelMember, "member-2", "")
		Eventually(func(g Gomega) {
			run := t.getRun(g, "run")
			c := runCondition(run, "Succeeded")
			g.Expect(c.Reason).To(Equal(placementv1beta1.UpdateRunFailedReason), "%+v", run.Status.Conditions)
			g.Expect(c.Message).To(ContainSubstring("the cluster count of ClusterResourcePlacement \"app\" changed from 3 to 4"))
			g.Expect(framework.Condition(stageStatus(run, "first").Conditions, "Succeeded").Reason).To(Equal(placementv1beta1.StageUpdatingFailedReason))
		}).Should(Succeed())
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "run-after-first"}})
		Consistently(func(g Gomega) {
			g.Expect(colorOn(g, "member-3", ns)).To(BeEmpty(), "a failed run rolls out nothing more")
		}, 3*time.Second).Should(Succeed())
	})

	It("run for a ResourcePlacement with namespaced strategies, runs and approval requests", func() {
		t := newTeam("staged-rp")
		ns := framework.UniqueName("app")
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}))
		canary := stage("canary", map[string]string{"env": "canary"})
		canary.BeforeStageTasks = []placementv1beta1.StageTask{approvalTask}
		prod := stage("prod", map[string]string{"env": "prod"})
		prod.MaxConcurrency = ptr.To(intstr.FromString("100%"))
		t.Create(framework.Ctx(), &placementv1beta1.StagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
			Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{canary, prod}}})
		rp := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
				Policy: externalCRP("x", ns).Spec.Policy, Strategy: placementv1beta1.RolloutStrategy{Type: placementv1beta1.ExternalRolloutStrategyType}}}
		// The team places the namespace itself with a rolling placement
		// (NamespaceOnly); the ResourcePlacement schedules onto the clusters
		// that have it.
		nsOnly := namespaceSelector(ns)
		nsOnly.SelectionScope = placementv1beta1.NamespaceOnly
		nsCRP := newCRP("ns", externalCRP("x", ns).Spec.Policy, nsOnly)
		t.place(nsCRP)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "ns"), []string{"member-1", "member-2", "member-3"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "0")
			for _, m := range []string{"member-1", "member-2", "member-3"} {
				g.Expect(framework.MemberCluster(g, fleetClient(), m).Status.Namespaces).To(HaveKey(ns), m)
			}
		}).Should(Succeed())
		t.place(rp)
		t.Create(framework.Ctx(), &placementv1beta1.StagedUpdateRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"},
			Spec: placementv1beta1.UpdateRunSpec{PlacementName: "web", StagedUpdateStrategyName: "s", State: placementv1beta1.UpdateRunStateRun}})

		By("the canary stage waits for its before-stage approval")
		req := &placementv1beta1.ApprovalRequest{}
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "r-before-canary"}, req)).To(Succeed())
			g.Expect(req.Labels).To(HaveKeyWithValue(placementv1beta1.TaskTypeLabel, placementv1beta1.BeforeStageTaskLabelValue))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "", "member-2": "", "member-3": ""}))
		}, 2*time.Second).Should(Succeed())
		t.approve(req)
		Eventually(func(g Gomega) {
			run := &placementv1beta1.StagedUpdateRun{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "r"}, run)).To(Succeed())
			g.Expect(runCondition(run, "Succeeded").Reason).To(Equal(placementv1beta1.UpdateRunSucceededReason), "%+v", run.Status)
			g.Expect(framework.Condition(stageStatus(run, "canary").BeforeStageTaskStatus[0].Conditions, "ApprovalRequestApproved").Reason).
				To(Equal(placementv1beta1.BeforeStageTaskApprovalRequestApprovedReason))
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
		}).Should(Succeed())
	})
})

var _ = Describe("A staged update run and a member cluster joining the fleet", Serial, func() {
	It("fails the run: the new cluster changes the placement's cluster count", func(sctx SpecContext) {
		t := newTeam("staged-join")
		ns := framework.UniqueName("app")
		canary := stage("canary", map[string]string{"env": "canary"})
		canary.AfterStageTasks = []placementv1beta1.StageTask{approvalTask}
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}),
			&placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "s"},
				Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{canary, stage("prod", map[string]string{"env": "prod"})}}})
		t.place(externalCRP("app", ns))
		t.waitScheduled("app", "member-1", "member-2", "member-3")
		t.Create(framework.Ctx(), clusterRun("run", "app", "s", "", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "run-after-canary"}, &placementv1beta1.ClusterApprovalRequest{})).To(Succeed())
		}).Should(Succeed())

		By("a fifth cluster joins the fleet with a label the placement selects")
		joined, err := hub.StartMembers(sctx, GinkgoT().TempDir(), []localfleet.MemberSpec{
			{Name: "member-5", Labels: map[string]string{"env": "canary", "region": "eastus"}, Nodes: localfleet.Nodes("m5", 1, "2", "8Gi", nil)}})
		DeferCleanup(func() {
			for _, m := range joined {
				Expect(hub.Unjoin(framework.Ctx(), m)).To(Succeed())
				Expect(m.Stop()).To(Succeed())
			}
		})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			run := t.getRun(g, "run")
			c := runCondition(run, "Succeeded")
			g.Expect(c.Reason).To(Equal(placementv1beta1.UpdateRunFailedReason), "%+v", run.Status.Conditions)
			g.Expect(c.Message).To(ContainSubstring(`the cluster count of ClusterResourcePlacement "app" changed from 3 to 4`))
		}).Should(Succeed())
		t.approve(&placementv1beta1.ClusterApprovalRequest{ObjectMeta: metav1.ObjectMeta{Name: "run-after-canary"}})
		Consistently(func(g Gomega) {
			g.Expect(colorOn(g, "member-1", ns)).To(BeEmpty(), "a failed run rolls out nothing more")
		}, 3*time.Second).Should(Succeed())
	})
})

var _ = Describe("A staged update run in a team with a narrow grant", Serial, func() {
	It("plans and rolls out over the team's granted clusters only, whatever its stages select", func() {
		t := newTeam("staged-grant")
		limitAllTeams("root:teams:nobody")
		prod := &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("staged-prod")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}
		Expect(fleetClient().Create(framework.Ctx(), prod)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), prod))).To(Succeed()) })

		ns := framework.UniqueName("app")
		everything := stage("everything", nil)
		everything.LabelSelector = &metav1.LabelSelector{}
		everything.MaxConcurrency = ptr.To(intstr.FromString("100%"))
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}),
			&placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{everything}}})
		crp := newCRP("app", pickAll(), namespaceSelector(ns))
		crp.Spec.Strategy.Type = placementv1beta1.ExternalRolloutStrategyType
		t.place(crp)
		t.waitScheduled("app", "member-1", "member-2")
		t.Create(framework.Ctx(), clusterRun("run", "app", "s", "", placementv1beta1.UpdateRunStateRun))
		Eventually(func(g Gomega) {
			run := t.getRun(g, "run")
			g.Expect(runCondition(run, "Succeeded").Reason).To(Equal(placementv1beta1.UpdateRunSucceededReason), "%+v", run.Status.Conditions)
			g.Expect(names(stageStatus(run, "everything").Clusters)).To(Equal([]string{"member-1", "member-2"}))
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": ""}))
			expectOnlyOn(g, framework.Namespace(ns), "member-1", "member-2")
		}).Should(Succeed())
	})
})

func names(cs []placementv1beta1.ClusterUpdatingStatus) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ClusterName)
	}
	return out
}
