package members

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/syncer/credential"
	"github.com/fleetplane/fleetplane/syncer/workapplier"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

const (
	timeout  = 2 * time.Minute
	interval = 250 * time.Millisecond
)

// expectedUsage computes, independently of the syncer, what the member's
// nodes and running pods imply.
func expectedUsage(g Gomega, m client.Client) (nodes int, capacityCPU, availableCPU, allocatableMemory resource.Quantity) {
	nl := &corev1.NodeList{}
	g.Expect(m.List(framework.Ctx(), nl)).To(Succeed())
	pl := &corev1.PodList{}
	g.Expect(m.List(framework.Ctx(), pl)).To(Succeed())
	for _, n := range nl.Items {
		capacityCPU.Add(n.Status.Capacity[corev1.ResourceCPU])
		availableCPU.Add(n.Status.Allocatable[corev1.ResourceCPU])
		allocatableMemory.Add(n.Status.Allocatable[corev1.ResourceMemory])
	}
	for _, p := range pl.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			availableCPU.Sub(c.Resources.Requests[corev1.ResourceCPU])
		}
	}
	return len(nl.Items), capacityCPU, availableCPU, allocatableMemory
}

var _ = Describe("Joined member clusters", func() {
	It("are Joined and Healthy with the properties their nodes and pods imply", func() {
		for _, m := range members {
			By(m.Name)
			mc := framework.MemberClient(m, scheme)
			dc := discovery.NewDiscoveryClientForConfigOrDie(m.Cluster.Config())
			version, err := dc.ServerVersion()
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(g Gomega) {
				status := framework.MemberCluster(g, fleetClient(), m.Name).Status
				g.Expect(framework.Condition(status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined).Status).To(Equal(metav1.ConditionTrue))
				g.Expect(framework.Condition(status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy).Status).To(Equal(metav1.ConditionTrue))
				n, capCPU, availCPU, allocMem := expectedUsage(g, mc)
				g.Expect(status.Properties[clusterv1beta1.NodeCountProperty].Value).To(Equal(fmt.Sprint(n)))
				g.Expect(status.Properties[clusterv1beta1.K8sVersionProperty].Value).To(Equal(version.GitVersion))
				g.Expect(status.ResourceUsage.Capacity.Cpu().Cmp(capCPU)).To(BeZero(), "capacity cpu %s vs %s", status.ResourceUsage.Capacity.Cpu(), &capCPU)
				g.Expect(status.ResourceUsage.Allocatable.Memory().Cmp(allocMem)).To(BeZero())
				g.Expect(status.ResourceUsage.Available.Cpu().Cmp(availCPU)).To(BeZero(), "available cpu %s vs %s", status.ResourceUsage.Available.Cpu(), &availCPU)
			}, timeout, interval).Should(Succeed())
			imc := &clusterv1beta1.InternalMemberCluster{}
			Expect(fleetClient().Get(framework.Ctx(), client.ObjectKey{Namespace: "fleet-member-" + m.Name, Name: m.Name}, imc)).To(Succeed())
			Expect(imc.ManagedFields).To(BeEmpty(), "no field records for heartbeats to rebuild")
		}
	})

	It("report less available CPU once pods request it", func() {
		m := members.Named("member-2")
		mc := framework.MemberClient(m, scheme)
		before := framework.MemberCluster(Default, fleetClient(), m.Name).Status.ResourceUsage.Available.Cpu().DeepCopy()
		Expect(mc.Create(framework.Ctx(), framework.Namespace("cpu-eater"))).To(Succeed())
		Expect(mc.Create(framework.Ctx(), deployment("cpu-eater", "eater", 3, "1500m"))).To(Succeed())
		DeferCleanup(func() { _ = mc.Delete(framework.Ctx(), framework.Namespace("cpu-eater")) })
		want := before.DeepCopy()
		want.Sub(resource.MustParse("4500m"))
		Eventually(func(g Gomega) {
			got := framework.MemberCluster(g, fleetClient(), m.Name).Status.ResourceUsage.Available.Cpu()
			g.Expect(got.Cmp(want)).To(BeZero(), "available cpu %s, want %s", got, &want)
		}, timeout, interval).Should(Succeed())
	})
})

var _ = Describe("Applying Work", func() {
	It("applies a Namespace, ConfigMap, Deployment and Service and reports them Available once the Deployment really is", func() {
		m := members.Named("member-1")
		fc := fleetClient()
		work := newWork(m.Name, "web-app",
			framework.Namespace("web"),
			framework.ConfigMap("web", "settings", map[string]string{"greeting": "hello"}),
			deployment("web", "web", 3, "100m"),
			service("web", "web", 80),
		)
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())

		mc := framework.MemberClient(m, scheme)
		Eventually(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			g.Expect(framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeApplied).Reason).To(Equal(placementv1beta1.WorkAllManifestsAppliedReason))
			available := framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
			g.Expect(available.Status).To(Equal(metav1.ConditionTrue), "%+v", available)
			g.Expect(available.ObservedGeneration).To(Equal(w.Generation))
			g.Expect(w.Status.ManifestConditions).To(HaveLen(4))
			for _, c := range w.Status.ManifestConditions {
				g.Expect(framework.Condition(c.Conditions, placementv1beta1.WorkConditionTypeAvailable).Reason).To(Equal(placementv1beta1.AvailabilityResultAvailable), "%+v", c.Identifier)
			}
			// Available only because the replicas really are.
			d := &appsv1.Deployment{}
			g.Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "web"}, d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())

		// The hub stores Works without the API server's field records
		// (internal objects keep none).
		w := &placementv1beta1.Work{}
		Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
		Expect(w.ManagedFields).To(BeEmpty())

		cm := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "web", Name: "settings"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("greeting", "hello"))
		Expect(cm.OwnerReferences).To(ContainElement(HaveField("Kind", "AppliedWork")))
		Expect(cm.Annotations).To(HaveKey(placementv1beta1.LastAppliedConfigAnnotation))
	})

	It("keeps a Work unavailable while its Deployment cannot run, and available once it can", func() {
		m := members.Named("member-1")
		fc := fleetClient()
		stuck := deployment("stuck", "stuck", 2, "100m")
		stuck.Spec.Template.Spec.NodeSelector = map[string]string{"no-such-node": "true"}
		work := newWork(m.Name, "stuck-app", framework.Namespace("stuck"), stuck)
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())

		Eventually(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			g.Expect(framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeApplied).Status).To(Equal(metav1.ConditionTrue))
			available := framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
			g.Expect(available.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(available.Reason).To(Equal(placementv1beta1.WorkNotAllManifestsAvailableReason))
			g.Expect(framework.Condition(w.Status.ManifestConditions[1].Conditions, placementv1beta1.WorkConditionTypeAvailable).Reason).To(Equal(placementv1beta1.AvailabilityResultNotYetAvailable))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			g.Expect(framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable).Status).To(Equal(metav1.ConditionFalse))
		}, 5*time.Second, time.Second).Should(Succeed())

		By("letting the Deployment schedule")
		Eventually(func() error {
			w := &placementv1beta1.Work{}
			if err := fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w); err != nil {
				return err
			}
			fixed := newWork(m.Name, "stuck-app", framework.Namespace("stuck"), deployment("stuck", "stuck", 2, "100m"))
			w.Spec = fixed.Spec
			return fc.Update(framework.Ctx(), w)
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			available := framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
			g.Expect(available.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(available.ObservedGeneration).To(Equal(w.Generation))
		}, timeout, interval).Should(Succeed())
	})

	It("deletes exactly the object whose manifest was removed, and nothing else", func() {
		m := members.Named("member-3")
		fc, mc := fleetClient(), framework.MemberClient(m, scheme)
		Expect(mc.Create(framework.Ctx(), framework.Namespace("keep"))).To(Succeed())
		Expect(mc.Create(framework.Ctx(), framework.ConfigMap("keep", "not-placed", map[string]string{"a": "b"}))).To(Succeed())
		work := newWork(m.Name, "two-configmaps", framework.ConfigMap("keep", "first", nil), framework.ConfigMap("keep", "second", nil))
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		Eventually(func() error {
			return mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "keep", Name: "second"}, &corev1.ConfigMap{})
		}, timeout, interval).Should(Succeed())

		Eventually(func() error {
			w := &placementv1beta1.Work{}
			if err := fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w); err != nil {
				return err
			}
			w.Spec.Workload.Manifests = w.Spec.Workload.Manifests[:1]
			return fc.Update(framework.Ctx(), w)
		}, timeout, interval).Should(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "keep", Name: "second"}, &corev1.ConfigMap{}))
		}, timeout, interval).Should(BeTrue())
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "keep", Name: "first"}, &corev1.ConfigMap{})).To(Succeed())
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "keep", Name: "not-placed"}, &corev1.ConfigMap{})).To(Succeed())

		By("deleting the Work")
		Expect(fc.Delete(framework.Ctx(), work)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "keep", Name: "first"}, &corev1.ConfigMap{}))
		}, timeout, interval).Should(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), &placementv1beta1.Work{}))
		}, timeout, interval).Should(BeTrue())
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "keep", Name: "not-placed"}, &corev1.ConfigMap{})).To(Succeed())
	})

	It("fails a bad manifest alone and reports why", func() {
		m := members.Named("member-2")
		fc, mc := fleetClient(), framework.MemberClient(m, scheme)
		widget := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}}}
		badService := service("default", "bad-port", 99999)
		work := newWork(m.Name, "partly-bad", widget.Object, framework.ConfigMap("default", "good", map[string]string{"ok": "yes"}), badService)
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		// Retried with backoff while it exists: gone, it cannot disturb
		// another spec's count of the syncer's applies.
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), work))).To(Succeed()) })

		Eventually(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			applied := framework.Condition(w.Status.Conditions, placementv1beta1.WorkConditionTypeApplied)
			g.Expect(applied.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(applied.Reason).To(Equal(placementv1beta1.WorkNotAllManifestsAppliedReason))
			g.Expect(w.Status.ManifestConditions).To(HaveLen(3))
			byOrdinal := map[int]metav1.Condition{}
			for _, c := range w.Status.ManifestConditions {
				byOrdinal[c.Identifier.Ordinal] = framework.Condition(c.Conditions, placementv1beta1.WorkConditionTypeApplied)
			}
			g.Expect(byOrdinal[0].Status).To(Equal(metav1.ConditionFalse))
			g.Expect(byOrdinal[0].Message).To(ContainSubstring("example.com/v1, Kind=Widget"))
			g.Expect(byOrdinal[1].Status).To(Equal(metav1.ConditionTrue))
			g.Expect(byOrdinal[2].Status).To(Equal(metav1.ConditionFalse))
			g.Expect(byOrdinal[2].Reason).To(Equal(placementv1beta1.ApplyResultFailedToApply))
			g.Expect(byOrdinal[2].Message).To(ContainSubstring("spec.ports[0].port"))
		}, timeout, interval).Should(Succeed())
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: "default", Name: "good"}, &corev1.ConfigMap{})).To(Succeed())
	})

	It("reports manifests that can never be applied once, and does not retry them until the Work changes", func() {
		m := members.Named("member-2")
		fc := fleetClient()
		By("a manifest that is not a Kubernetes object is refused at admission")
		notObjects := newWork(m.Name, "not-objects", []int{1, 2, 3}, map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "kindless"}})
		Expect(apierrors.IsInvalid(fc.Create(framework.Ctx(), notObjects))).To(BeTrue())

		work := newWork(m.Name, "never-applicable",
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": "cm-", "namespace": "default"}},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "default"}},
			framework.ConfigMap("default", "twice", nil), framework.ConfigMap("default", "twice", map[string]string{"again": "yes"}))
		Expect(fc.Create(framework.Ctx(), work)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), work))).To(Succeed()) })
		Eventually(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			reasons := map[int]string{}
			for _, c := range w.Status.ManifestConditions {
				reasons[c.Identifier.Ordinal] = framework.Condition(c.Conditions, placementv1beta1.WorkConditionTypeApplied).Reason
			}
			g.Expect(reasons).To(Equal(map[int]string{
				0: placementv1beta1.ApplyResultFoundGenerateName, 1: placementv1beta1.ApplyResultDecodingErred,
				2: placementv1beta1.ApplyResultApplied, 3: placementv1beta1.ApplyResultDuplicated,
			}))
		}, timeout, interval).Should(Succeed())

		applies := func() float64 {
			ms, err := localfleet.Scrape(m.MetricsURL())
			Expect(err).NotTo(HaveOccurred())
			n, ok := ms.Sum("fleet_work_apply_duration_seconds", map[string]string{"member": m.Name})
			Expect(ok).To(BeTrue(), "the syncer reports its applies")
			return n
		}
		// Creating "twice" may bring one more apply through its watch:
		// count from when the applies have settled.
		var before float64
		Eventually(func(g Gomega) {
			before = applies()
			time.Sleep(3 * time.Second)
			g.Expect(applies()).To(Equal(before))
		}, timeout, interval).Should(Succeed())
		Consistently(applies, 20*time.Second, time.Second).Should(Equal(before), "the syncer applied Work again although only a change of the Work can fix it")
	})
})

var _ = Describe("A server-side apply of an object found absent", func() {
	It("creates it, or leaves an object of that name created since as it was", func() {
		mc := framework.MemberClient(members.Named("member-1"), scheme)
		ns := framework.UniqueName("absent")
		Expect(mc.Create(framework.Ctx(), framework.Namespace(ns))).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(mc.Delete(framework.Ctx(), framework.Namespace(ns)))).To(Succeed())
		})
		applied := func(name, color string) *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("ConfigMap")
			u.SetNamespace(ns)
			u.SetName(name)
			Expect(unstructured.SetNestedField(u.Object, color, "data", "color")).To(Succeed())
			return u
		}

		By("applying one that does not exist: it is created, owned by the manager's apply")
		created := applied("new", "blue")
		Expect(workapplier.ApplyIfAbsent(framework.Ctx(), mc, created, "fleet-e2e")).To(Succeed())
		cm := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "new"}, cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"color": "blue"}))
		Expect(created.GetResourceVersion()).To(Equal(cm.ResourceVersion))
		Expect(cm.ManagedFields).To(ContainElement(And(
			HaveField("Manager", "fleet-e2e"), HaveField("Operation", metav1.ManagedFieldsOperationApply))))

		By("applying one that someone else created: a Conflict, and their object unchanged")
		Expect(mc.Create(framework.Ctx(), framework.ConfigMap(ns, "theirs", map[string]string{"color": "red"}))).To(Succeed())
		before := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "theirs"}, before)).To(Succeed())
		err := workapplier.ApplyIfAbsent(framework.Ctx(), mc, applied("theirs", "blue"), "fleet-e2e")
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a Conflict, got %v", err)
		after := &corev1.ConfigMap{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Namespace: ns, Name: "theirs"}, after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(after.Data).To(Equal(map[string]string{"color": "red"}))
		Expect(after.ManagedFields).NotTo(ContainElement(HaveField("Manager", "fleet-e2e")))
	})
})

var _ = Describe("The syncer's hub credential", func() {
	It("reads its own member's Work but is refused on another member's namespace and on team workspaces", func() {
		m := members.Named("member-1")
		cfg, syncer := syncerClient(m)
		Expect(syncer.List(framework.Ctx(), &placementv1beta1.WorkList{}, client.InNamespace("fleet-member-"+m.Name))).To(Succeed())

		err := syncer.List(framework.Ctx(), &placementv1beta1.WorkList{}, client.InNamespace("fleet-member-member-2"))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing another member's Work: %v", err)
		err = syncer.Get(framework.Ctx(), client.ObjectKey{Namespace: "fleet-member-member-2", Name: "member-2"}, &clusterv1beta1.InternalMemberCluster{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "reading another member's InternalMemberCluster: %v", err)
		err = syncer.List(framework.Ctx(), &clusterv1beta1.MemberClusterList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing MemberClusters: %v", err)

		team, err := hub.CreateTeamWorkspace(framework.Ctx(), "credential-check")
		Expect(err).NotTo(HaveOccurred())
		teamCfg := *cfg
		teamCfg.Host = hub.Config(team).Host
		inTeam, err := client.New(&teamCfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		err = inTeam.List(framework.Ctx(), &corev1.NamespaceList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing namespaces in %s: %v", team, err)
		err = inTeam.List(framework.Ctx(), &placementv1beta1.ClusterResourcePlacementList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing placements in %s: %v", team, err)

		By("being a short-lived token of the syncer's own service account")
		token, err := credential.Parse(cfg.BearerToken)
		Expect(err).NotTo(HaveOccurred(), "join issues a bound, expiring service-account token")
		Expect(token.Expiry()).To(BeTemporally("<=", time.Now().Add(time.Hour+time.Minute)))

		By("reporting on its Work, and changing nothing else of it")
		work := newWork(m.Name, framework.UniqueName("credential"), framework.ConfigMap("default", framework.UniqueName("credential"), nil))
		Expect(fleetClient().Create(framework.Ctx(), work)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), work))).To(Succeed()) })
		Eventually(func(g Gomega) { workAvailable(g, work) }, timeout, interval).Should(Succeed())
		for what, change := range map[string]func(*placementv1beta1.Work){
			"spec":       func(w *placementv1beta1.Work) { w.Spec.Workload.Manifests = nil },
			"labels":     func(w *placementv1beta1.Work) { w.Labels = map[string]string{placementv1beta1.WorkspaceLabel: "other"} },
			"finalizers": func(w *placementv1beta1.Work) { w.Finalizers = append(w.Finalizers, "example.com/mine") },
		} {
			got := &placementv1beta1.Work{}
			Expect(syncer.Get(framework.Ctx(), client.ObjectKeyFromObject(work), got)).To(Succeed())
			change(got)
			err := syncer.Update(framework.Ctx(), got)
			Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "changing the Work's %s: %v", what, err)
		}
		got := &placementv1beta1.Work{}
		Expect(syncer.Get(framework.Ctx(), client.ObjectKeyFromObject(work), got)).To(Succeed())
		Expect(syncer.Status().Update(framework.Ctx(), got)).To(Succeed(), "writing the Work's status")
		Expect(syncer.Create(framework.Ctx(), newWork(m.Name, framework.UniqueName("forged")))).To(Satisfy(apierrors.IsForbidden), "creating Work")
	})
})
