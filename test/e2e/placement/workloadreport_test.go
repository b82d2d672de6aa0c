package placement

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// workloadReport reads a ClusterResourcePlacement's workload report as the
// team.
func (t *team) workloadReport(g Gomega, name string) *placementv1beta1.ClusterWorkloadReport {
	r := &placementv1beta1.ClusterWorkloadReport{}
	g.ExpectWithOffset(1, t.Client.Get(framework.Ctx(), client.ObjectKey{Name: name}, r)).To(Succeed(), "ClusterWorkloadReport %s in %s", name, t.Path)
	return r
}

// reportedObject is the report's entry of one object.
func reportedObject(g Gomega, r *placementv1beta1.ClusterWorkloadReport, kind, name string) placementv1beta1.ObjectWorkloadReport {
	for _, o := range r.Status.Objects {
		if o.Kind == kind && o.Name == name {
			return o
		}
	}
	g.ExpectWithOffset(1, r.Status.Objects).To(ContainElement(HaveField("Kind", kind)), "%s %s is not in the report", kind, name)
	return placementv1beta1.ObjectWorkloadReport{}
}

// onCluster is an object's state on one cluster in the report.
func onCluster(g Gomega, o placementv1beta1.ObjectWorkloadReport, cluster string) placementv1beta1.ClusterWorkloadState {
	for _, c := range o.Clusters {
		if c.ClusterName == cluster {
			return c
		}
	}
	g.ExpectWithOffset(1, o.Clusters).To(ContainElement(HaveField("ClusterName", cluster)), "%s %s has no entry for %s", o.Kind, o.Name, cluster)
	return placementv1beta1.ClusterWorkloadState{}
}

func withReportBack(p *placementv1beta1.ClusterResourcePlacement, destination placementv1beta1.ReportBackDestination) *placementv1beta1.ClusterResourcePlacement {
	p.Spec.Strategy.ReportBackStrategy = &placementv1beta1.ReportBackStrategy{Type: placementv1beta1.ReportBackStrategyTypeMirror, Destination: &destination}
	return p
}

var _ = Describe("Workload reports", func() {
	It("show a team how its Deployment runs on each cluster, and follow a scale on a member", func() {
		t := newTeam("workloads")
		ns := framework.UniqueName("web")
		web := deployment(ns, "web", "nginx:1.27")
		// No replicas on the hub: each member scales it as it likes (an
		// autoscaler would), and placing it again does not undo that.
		web.Spec.Replicas = nil
		t.Create(framework.Ctx(), framework.Namespace(ns), web)
		targets := []string{"member-1", "member-2"}
		t.place(newCRP("web", pickFixed(targets...), namespaceSelector(ns)))

		Eventually(func(g Gomega) {
			r := t.workloadReport(g, "web")
			g.Expect(r.Status.ObjectCount).To(BeEquivalentTo(2), "the namespace and the Deployment")
			g.Expect(r.Status.AvailableClusters).To(Equal("2/2"))
			g.Expect(r.Status.ReadyReplicas).To(Equal("2/2"))
			g.Expect(r.Status.Summary).To(Equal("all 2 objects available on 2 clusters"))
			d := reportedObject(g, r, "Deployment", "web")
			g.Expect(d.Summary).To(Equal("2/2 clusters available, 2/2 replicas ready"))
			for _, m := range targets {
				s := onCluster(g, d, m)
				g.Expect(s.Available).To(Equal(metav1.ConditionTrue))
				g.Expect(s.Workload.ReadyReplicas).To(Equal(ptr.To[int32](1)), "ready replicas on %s", m)
				g.Expect(s.Workload.Conditions).To(ContainElement(HaveField("Type", "Available")), "the Deployment's own conditions on %s", m)
			}
			g.Expect(framework.Condition(r.Status.Conditions, placementv1beta1.WorkloadReportReportedConditionType).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(r.OwnerReferences).To(ContainElement(HaveField("Name", "web")), "the report goes with its placement")
		}).Should(Succeed())

		By("scaling the Deployment to 3 on member-1 by hand")
		scaled := time.Now()
		update(memberClient("member-1"), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](3)
		})
		Eventually(func(g Gomega) {
			g.Expect(*onCluster(g, reportedObject(g, t.workloadReport(g, "web"), "Deployment", "web"), "member-1").Workload.Replicas).To(BeEquivalentTo(3))
		}).WithPolling(100 * time.Millisecond).Should(Succeed())
		AddReportEntry("a scale on a member reached the team's report after", time.Since(scaled).Round(10*time.Millisecond).String())
		Eventually(func(g Gomega) {
			r := t.workloadReport(g, "web")
			g.Expect(r.Status.ReadyReplicas).To(Equal("4/4"))
			g.Expect(reportedObject(g, r, "Deployment", "web").Summary).To(Equal("2/2 clusters available, 4/4 replicas ready"))
		}).Should(Succeed())

		By("reading it with kubectl fleet status as the team")
		out, _ := runFleet(t.kubeconfig(), 0, "status", "web")
		Expect(out).To(ContainSubstring("Workloads (ClusterWorkloadReport web): all 2 objects available on 2 clusters"))
		Expect(out).To(MatchRegexp(`Deployment %s/web\s+\(all\)\s+2/2\s+4/4`, ns))
		Expect(out).To(MatchRegexp(`member-1\s+True\s+3/3`))

		By("the report is the hub's: the team cannot write it")
		err := t.Client.Update(framework.Ctx(), t.workloadReport(Default, "web"))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a team updating its report: %v", err)
		forged := &placementv1beta1.ClusterWorkloadReport{ObjectMeta: metav1.ObjectMeta{Name: "forged"}}
		Expect(apierrors.IsForbidden(t.Client.Create(framework.Ctx(), forged))).To(BeTrue(), "a team creating a report")

		By("deleting the placement removes its report")
		t.deletePlacement(newCRP("web", nil))
		Eventually(func() bool {
			return apierrors.IsNotFound(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "web"}, &placementv1beta1.ClusterWorkloadReport{}))
		}).Should(BeTrue())
	})

	It("mirror the member's status onto the team's object (OriginalResource) and into the report (WorkAPI)", func() {
		t := newTeam("mirror")
		ns := framework.UniqueName("web")
		t.Create(framework.Ctx(), framework.Namespace(ns), deployment(ns, "web", "nginx:1.27"))
		t.place(withReportBack(newCRP("web", pickFixed("member-1"), namespaceSelector(ns)), placementv1beta1.ReportBackDestinationOriginalResource))

		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
			g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(1), "the hub Deployment's status is member-1's")
			g.Expect(d.Status.Conditions).To(ContainElement(HaveField("Type", appsv1.DeploymentAvailable)))
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"), "status only, never spec")
			c := framework.Condition(t.workloadReport(g, "web").Status.Conditions, placementv1beta1.WorkloadReportStatusBackReportedConditionType)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%+v", c)
		}).Should(Succeed())

		By("a placement on more than one cluster cannot mirror to the original, and says why")
		ns2 := framework.UniqueName("wide")
		t.Create(framework.Ctx(), framework.Namespace(ns2), deployment(ns2, "wide", "nginx:1.27"))
		t.place(withReportBack(newCRP("wide", pickFixed("member-1", "member-2"), namespaceSelector(ns2)), placementv1beta1.ReportBackDestinationOriginalResource))
		Eventually(func(g Gomega) {
			c := framework.Condition(t.workloadReport(g, "wide").Status.Conditions, placementv1beta1.WorkloadReportStatusBackReportedConditionType)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(placementv1beta1.StatusBackReportNotSingleClusterReason))
			g.Expect(c.Message).To(ContainSubstring("it names 2 clusters (PickFixed)"))
		}).Should(Succeed())
		d := &appsv1.Deployment{}
		Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Namespace: ns2, Name: "wide"}, d)).To(Succeed())
		Expect(d.Status.ReadyReplicas).To(BeZero(), "nothing is mirrored onto the original")

		By("WorkAPI: each cluster's whole status in the report")
		ns3 := framework.UniqueName("api")
		t.Create(framework.Ctx(), framework.Namespace(ns3), deployment(ns3, "api", "nginx:1.27"))
		t.place(withReportBack(newCRP("api", pickFixed("member-1", "member-2"), namespaceSelector(ns3)), placementv1beta1.ReportBackDestinationWorkAPI))
		Eventually(func(g Gomega) {
			o := reportedObject(g, t.workloadReport(g, "api"), "Deployment", "api")
			for _, m := range []string{"member-1", "member-2"} {
				s := onCluster(g, o, m)
				g.Expect(s.BackReportedStatus).NotTo(BeNil(), "the status of %s", m)
				var st struct {
					Status appsv1.DeploymentStatus `json:"status"`
				}
				g.Expect(json.Unmarshal(s.BackReportedStatus.ObservedStatus.Raw, &st)).To(Succeed())
				g.Expect(st.Status.ReadyReplicas).To(BeEquivalentTo(1), "ready replicas on %s", m)
			}
		}).Should(Succeed())
	})

	It("bring a member's warnings about a team's pods to the team, as events in its workspace", func() {
		t := newTeam("warnings")
		ns := framework.UniqueName("app")
		app := deployment(ns, "app", "nginx:1.27")
		// No member has such a node: the member's scheduler warns about
		// the pod.
		app.Spec.Template.Spec.NodeSelector = map[string]string{"fleetplane.io/no-such-node": "true"}
		t.Create(framework.Ctx(), framework.Namespace(ns), app)
		t.place(newCRP("app", pickFixed("member-1"), namespaceSelector(ns)))

		teamEvents := func(g Gomega, reason string) []corev1.Event {
			list := &corev1.EventList{}
			g.Expect(t.Client.List(framework.Ctx(), list)).To(Succeed(), "the team lists its events")
			var out, other []corev1.Event
			for _, e := range list.Items {
				if e.Namespace == ns && e.Reason == reason && e.InvolvedObject.Kind == "Deployment" && e.InvolvedObject.Name == "app" {
					out = append(out, e)
				} else {
					other = append(other, e)
				}
			}
			g.Expect(out).NotTo(BeEmpty(), "no %s event on Deployment %s/app; the workspace's other events: %v", reason, ns, other)
			return out
		}
		Eventually(func(g Gomega) {
			s := onCluster(g, reportedObject(g, t.workloadReport(g, "app"), "Deployment", "app"), "member-1")
			g.Expect(s.Warnings).To(ContainElement(HaveField("Reason", "FailedScheduling")))
			events := teamEvents(g, "FailedScheduling")
			g.Expect(events).NotTo(BeEmpty())
			g.Expect(events[0].Type).To(Equal(corev1.EventTypeWarning))
			g.Expect(events[0].Message).To(HavePrefix("cluster member-1: Pod app-"), "the cluster and the pod are named")
		}).Should(Succeed())

		By("an image that cannot be pulled: the event the member's kubelet records")
		pods := &corev1.PodList{}
		Expect(memberClient("member-1").List(framework.Ctx(), pods, client.InNamespace(ns))).To(Succeed())
		Expect(pods.Items).NotTo(BeEmpty())
		pod := pods.Items[0]
		now := metav1.Now()
		Expect(memberClient("member-1").Create(framework.Ctx(), &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: pod.Name + ".pull"},
			InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID},
			Type:           corev1.EventTypeWarning, Reason: "Failed", Count: 1, FirstTimestamp: now, LastTimestamp: now,
			Message: `Failed to pull image "nginx:nope": rpc error: code = NotFound desc = manifest unknown`,
			Source:  corev1.EventSource{Component: "kubelet", Host: "node-1"},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			s := onCluster(g, reportedObject(g, t.workloadReport(g, "app"), "Deployment", "app"), "member-1")
			works := &placementv1beta1.WorkList{}
			g.Expect(worksClient().List(framework.Ctx(), works, client.InNamespace("fleet-member-member-1"))).To(Succeed())
			var reported []placementv1beta1.MemberWarning
			for _, w := range works.Items {
				for _, mc := range w.Status.ManifestConditions {
					reported = append(reported, mc.Warnings...)
				}
			}
			g.Expect(s.Warnings).To(ContainElement(HaveField("Reason", "Failed")), "the report's warnings; the Works': %+v", reported)
			events := teamEvents(g, "Failed")
			g.Expect(events).NotTo(BeEmpty())
			g.Expect(events[0].Message).To(Equal(fmt.Sprintf(`cluster member-1: Pod %s: Failed to pull image "nginx:nope": rpc error: code = NotFound desc = manifest unknown`, pod.Name)))
		}).Should(Succeed())
		out, _ := runFleet(t.kubeconfig(), 0, "status", "app")
		Expect(out).To(ContainSubstring(`warning Failed: Failed to pull image "nginx:nope"`))
	})
})
