package placement

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// kubectlFleet runs the built plugin with a kubeconfig and returns its
// session; flags go after the plugin's command, as kubectl passes them.
func kubectlFleet(kubeconfig string, args ...string) *gexec.Session {
	cmd := exec.Command(filepath.Join(localfleet.BinDir(), "kubectl-fleet"), append(args, "--kubeconfig", kubeconfig)...)
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return s
}

// runFleet runs the plugin to completion and returns its stdout and stderr.
func runFleet(kubeconfig string, wantExit int, args ...string) (string, string) {
	s := kubectlFleet(kubeconfig, args...)
	EventuallyWithOffset(1, s, time.Minute).Should(gexec.Exit(wantExit), "kubectl fleet %s\n%s", strings.Join(args, " "), s.Err.Contents())
	return string(s.Out.Contents()), string(s.Err.Contents())
}

// kubeconfig writes a kubeconfig for the team's own identity.
func (t *team) kubeconfig() string {
	file := filepath.Join(GinkgoT().TempDir(), "team.kubeconfig")
	ExpectWithOffset(1, localfleet.WriteKubeconfig(t.Config, file)).To(Succeed())
	return file
}

var _ = Describe("kubectl fleet", func() {
	It("has an example in every command's help", func() {
		for _, cmd := range [][]string{{"approve"}, {"cordon"}, {"uncordon"}, {"drain"}, {"status"}, {"team", "create"}, {"join"}, {"unjoin"}} {
			out, _ := runFleet(hub.KubeconfigPath(), 0, append(cmd, "--help")...)
			Expect(out).To(ContainSubstring("Examples:"), "kubectl fleet %s --help", strings.Join(cmd, " "))
		}
		// kubectl runs the plugin as kubectl fleet; its usage says so.
		out, _ := runFleet(hub.KubeconfigPath(), 0, "--help")
		Expect(out).To(ContainSubstring("Usage:\n  kubectl fleet [command]"))
	})

	It("ws moves a kubeconfig between workspaces, creates and lists them (also as kubectl-ws)", func() {
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "admin.kubeconfig")
		raw, err := os.ReadFile(hub.KubeconfigPath())
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(kubeconfig, raw, 0o600)).To(Succeed())
		name := framework.UniqueName("cli-ws")

		runFleet(kubeconfig, 0, "ws", ":root:teams")
		out, _ := runFleet(kubeconfig, 0, "ws", "current", "--short")
		Expect(strings.TrimSpace(out)).To(Equal("root:teams"))
		out, _ = runFleet(kubeconfig, 0, "ws", "create", name, "--enter")
		Expect(out).To(ContainSubstring(`Workspace "root:teams:` + name + `" is ready.`))
		out, _ = runFleet(kubeconfig, 0, "ws", "current", "--short")
		Expect(strings.TrimSpace(out)).To(Equal("root:teams:" + name))
		runFleet(kubeconfig, 0, "ws", "..")
		out, _ = runFleet(kubeconfig, 0, "ws", "tree")
		Expect(out).To(ContainSubstring(name))
		runFleet(kubeconfig, 0, "ws", "-")
		out, _ = runFleet(kubeconfig, 0, "ws", "current", "--short")
		Expect(strings.TrimSpace(out)).To(Equal("root:teams:"+name), "ws - goes back")

		By("the same binary named kubectl-ws is kubectl ws")
		ws := exec.Command(filepath.Join(localfleet.BinDir(), "kubectl-ws"), "current", "--short", "--kubeconfig", kubeconfig)
		got, err := ws.Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(string(got))).To(Equal("root:teams:" + name))
		_, errOut := runFleet(kubeconfig, 1, "ws", ":root:teams:does-not-exist")
		Expect(errOut).To(ContainSubstring("does-not-exist"))
	})

	It("team create makes a workspace, its cluster grant and its admins", func() {
		name := framework.UniqueName("cli-team")
		out, _ := runFleet(hub.KubeconfigPath(), 0, "team", "create", name, "--clusters", "env=prod", "--admin-group", name+"-devs")
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
		})
		Expect(out).To(ContainSubstring("ClusterGrant " + name + " gives it 2 member cluster(s): member-1, member-2"))
		grant := &tenancyv1alpha1.ClusterGrant{}
		Expect(fleetClient().Get(framework.Ctx(), client.ObjectKey{Name: name}, grant)).To(Succeed())
		Expect(grant.Spec.Workspaces).To(Equal([]string{"root:teams:" + name}))
		c, err := hub.Client("root:teams:"+name, scheme)
		Expect(err).NotTo(HaveOccurred())
		crb := &rbacv1.ClusterRoleBinding{}
		Expect(c.Get(framework.Ctx(), client.ObjectKey{Name: "team-admins"}, crb)).To(Succeed())
		Expect(crb.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: name + "-devs"}))
		Expect(c.List(framework.Ctx(), &placementv1beta1.ClusterResourcePlacementList{})).To(Succeed(), "the new workspace serves the placement API")

		By("re-running it to add an admin keeps the grant's clusters")
		out, _ = runFleet(hub.KubeconfigPath(), 0, "team", "create", name, "--admin-user", "alice")
		Expect(out).To(ContainSubstring("ClusterGrant " + name + " gives it 2 member cluster(s): member-1, member-2"))
		Expect(c.Get(framework.Ctx(), client.ObjectKey{Name: "team-admins"}, crb)).To(Succeed())
		Expect(crb.Subjects).To(ConsistOf(rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}))
	})

	It("status shows each cluster, picked or why not, as the team sees it; approve moves a staged run on", func() {
		t := newTeam("cli-status")
		ns := framework.UniqueName("app")
		canary := stage("canary", map[string]string{"env": "canary"})
		canary.AfterStageTasks = []placementv1beta1.StageTask{approvalTask}
		prod := stage("prod", map[string]string{"env": "prod"})
		prod.MaxConcurrency = ptr.To(intstr.FromString("100%"))
		t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"}),
			&placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{canary, prod}}})
		t.place(externalCRP("app", ns))
		t.waitScheduled("app", "member-1", "member-2", "member-3")
		t.Create(framework.Ctx(), clusterRun("run", "app", "s", "", placementv1beta1.UpdateRunStateRun))
		kubeconfig := t.kubeconfig()

		By("the canary cluster is updated; the prod clusters are picked but not rolled out; member-4 is not picked")
		Eventually(func(g Gomega) {
			g.Expect(colorOn(g, "member-3", ns)).To(Equal("blue"))
			s := kubectlFleet(kubeconfig, "status", "app")
			g.Eventually(s, time.Minute).Should(gexec.Exit(0))
			out := string(s.Out.Contents())
			g.Expect(out).To(ContainSubstring("ClusterResourcePlacement app in " + t.Path))
			g.Expect(out).To(MatchRegexp(`member-3\s+0\s+True\s+True\s+0\s+0\s+0\s+yes`))
			g.Expect(out).To(MatchRegexp(`member-1\s+-\s+-\s+-\s+0\s+0\s+0\s+yes`))
			g.Expect(out).To(MatchRegexp(`member-4\s+-\s+-\s+-\s+0\s+0\s+0\s+no: cluster does not match`))
		}).Should(Succeed())

		By("approve, as the team and in KubeFleet's form, lets the prod stage go")
		out, _ := runFleet(kubeconfig, 0, "approve", "careq", "--hub-cluster-context", "workspace", "--name", "run-after-canary")
		Expect(out).To(ContainSubstring("update run run goes on past stage canary"))
		Eventually(func(g Gomega) {
			g.Expect(colors(g, ns)).To(Equal(map[string]string{"member-1": "blue", "member-2": "blue", "member-3": "blue"}))
		}).Should(Succeed())

		By("commands say which workspace to use when the context points elsewhere")
		_, errOut := runFleet(hub.KubeconfigPath(), 1, "status", "app")
		Expect(errOut).To(ContainSubstring("workspace root does not serve the placement API"))
		Expect(errOut).To(ContainSubstring("kubectl ws :root:teams:<team>"))
		_, errOut = runFleet(kubeconfig, 1, "approve", "approvalrequest", "x", "-n", ns)
		Expect(errOut).To(ContainSubstring("not found"))
	})
})

var _ = Describe("kubectl fleet drain", Serial, func() {
	It("cordons a member and evicts its placements within their disruption budgets, with progress; uncordon brings it back", func() {
		t := newTeam("cli-drain")
		ns, _ := t.appNamespace("app")
		t.placeOnProd("app", ns)
		t.Create(framework.Ctx(), &placementv1beta1.ClusterResourcePlacementDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "app"},
			Spec: placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2))}})
		DeferCleanup(func() { runFleet(hub.KubeconfigPath(), 0, "uncordon", "member-1") })

		By("the budget blocks the eviction; drain (in KubeFleet's form) keeps trying and says so")
		drain := kubectlFleet(hub.KubeconfigPath(), "draincluster", "--hub-cluster-context", "root", "--cluster-name", "member-1", "--timeout", "2m", "--retry-interval", "1s")
		Eventually(drain.Err, time.Minute).Should(gbytes.Say(`member cluster member-1 cordoned`))
		Eventually(drain.Err, time.Minute).Should(gbytes.Say(`evicting ClusterResourcePlacement app in ` + t.Path))
		Eventually(drain.Err, time.Minute).Should(gbytes.Say(`blocked: Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 2, totalPlacements: 2`))
		Expect(framework.MemberCluster(Default, fleetClient(), "member-1").Spec.Taints).To(ContainElement(clusterv1beta1.Taint{Key: "cordon-key", Value: "cordon-value", Effect: "NoSchedule"}))
		Expect(configMapOn(Default, "member-1", ns, "settings")).NotTo(BeNil(), "nothing is evicted yet")

		By("loosening the budget lets the drain finish; the placement leaves member-1 and stays on member-2")
		update(t.Client, &placementv1beta1.ClusterResourcePlacementDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "app"}},
			func(b *placementv1beta1.ClusterResourcePlacementDisruptionBudget) {
				b.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
			})
		Eventually(drain, time.Minute).Should(gexec.Exit(0), string(drain.Err.Contents()))
		Expect(string(drain.Err.Contents())).To(ContainSubstring("member cluster member-1 drained"))
		Eventually(func(g Gomega) {
			g.Expect(keys(t.activeBindings(g, "app"))).To(ConsistOf("member-2"), "the cordon keeps the PickAll placement off member-1")
			expectGoneFrom(g, framework.ConfigMap(ns, "settings", nil), "member-1")
			configMapOn(g, "member-2", ns, "settings")
		}).Should(Succeed())

		By("uncordon (in KubeFleet's form) lets the placement back")
		out, _ := runFleet(hub.KubeconfigPath(), 0, "uncordoncluster", "--hub-cluster-context", "root", "--cluster-name", "member-1")
		Expect(out).To(ContainSubstring("member cluster member-1 uncordoned"))
		Eventually(func(g Gomega) {
			g.Expect(keys(t.activeBindings(g, "app"))).To(ConsistOf("member-1", "member-2"))
			configMapOn(g, "member-1", ns, "settings")
		}).Should(Succeed())
		cordon, _ := runFleet(hub.KubeconfigPath(), 0, "cordon", "member-4")
		Expect(cordon).To(ContainSubstring("member cluster member-4 cordoned"))
		runFleet(hub.KubeconfigPath(), 0, "uncordon", "member-4")
		Expect(bytes.Contains(drain.Out.Contents(), []byte("blocked"))).To(BeFalse(), "progress goes to stderr")
	})
})
