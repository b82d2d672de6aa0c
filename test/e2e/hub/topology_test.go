package hub

import (
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/internal/huburl"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("Workspace topology", func() {
	It("has root:fleet and root:teams Ready and the fleet-team workspace type", func(ctx SpecContext) {
		root := hub.KCP("root")
		for _, name := range []string{"fleet", "teams"} {
			ws, err := root.TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(ws.Status.Phase).To(Equal(corev1alpha1.LogicalClusterPhaseReady), "workspace root:%s", name)
		}
		teams, err := root.TenancyV1alpha1().Workspaces().Get(ctx, "teams", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(teams.Spec.Type.Name).To(BeEquivalentTo("fleet-teams"))
		wt, err := root.TenancyV1alpha1().WorkspaceTypes().Get(ctx, "fleet-team", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(wt.Spec.DefaultAPIBindings).To(ConsistOf(
			HaveField("Export", "placement.kubernetes-fleet.io"),
			HaveField("Export", "kubernetes"),
		))
	})

	It("exports the fleet and workload APIs from root:fleet and serves them there", func(ctx SpecContext) {
		fleet := hub.KCP("root:fleet")
		for _, name := range []string{"cluster.kubernetes-fleet.io", "placement.kubernetes-fleet.io", "kubernetes", "multicluster.x-k8s.io"} {
			export, err := fleet.ApisV1alpha2().APIExports().Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "APIExport %s", name)
			Expect(export.Spec.Resources).NotTo(BeEmpty())
			binding, err := fleet.ApisV1alpha2().APIBindings().Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "APIBinding %s", name)
			Expect(binding.Status.Phase).To(Equal(apisv1alpha2.APIBindingPhaseBound))
		}
		workloads, err := fleet.ApisV1alpha2().APIExports().Get(ctx, "kubernetes", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		var resources []string
		for _, r := range workloads.Spec.Resources {
			resources = append(resources, r.Name+"."+r.Group)
		}
		Expect(resources).To(ContainElements(
			"deployments.apps", "statefulsets.apps", "daemonsets.apps", "replicasets.apps",
			"jobs.batch", "cronjobs.batch", "services.", "ingresses.networking.k8s.io",
			"networkpolicies.networking.k8s.io", "poddisruptionbudgets.policy",
			"horizontalpodautoscalers.autoscaling",
		))
	})

	It("binds a new fleet-team workspace to the placement and workload APIs automatically", func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("team"))
		Expect(err).NotTo(HaveOccurred())
		list, err := hub.KCP(path).ApisV1alpha2().APIBindings().List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var exports []string
		for _, b := range list.Items {
			Expect(b.Status.Phase).To(Equal(apisv1alpha2.APIBindingPhaseBound), "APIBinding %s", b.Name)
			exports = append(exports, b.Spec.Reference.Export.Path+":"+b.Spec.Reference.Export.Name)
		}
		Expect(exports).To(ContainElements("root:fleet:placement.kubernetes-fleet.io", "root:fleet:kubernetes"))
		Expect(exports).NotTo(ContainElement("root:fleet:multicluster.x-k8s.io"), "the cluster inventory API is bound by the teams that want it")
	})

	It("stores ordinary workloads applied into a team workspace", func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("team"))
		Expect(err).NotTo(HaveOccurred())
		c, err := hub.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())

		ns := framework.Namespace("app")
		Expect(c.Create(ctx, ns)).To(Succeed())
		labels := map[string]string{"app": "web"}
		deploy := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
				},
			},
		}
		Expect(c.Create(ctx, deploy)).To(Succeed())
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app"},
			Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}},
		}
		Expect(c.Create(ctx, svc)).To(Succeed())
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: "app"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "once", Image: "busybox"}},
			}}},
		}
		Expect(c.Create(ctx, job)).To(Succeed())

		got := &appsv1.Deployment{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(deploy), got)).To(Succeed())
		Expect(got.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
		Expect(got.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
	})
})

var _ = Describe("kcp's cache server", func() {
	It("serves the hub's shards alone: neither an anonymous client nor a team can read or write what every shard replicates", func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("team"))
		Expect(err).NotTo(HaveOccurred())
		team, err := hub.TeamAdmin(ctx, path, "team-admin")
		Expect(err).NotTo(HaveOccurred())
		anonymous := hub.WithToken(path, "")
		cached := "/services/cache/shards/root/clusters/root/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
		forged := []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"forged","annotations":{"kcp.io/cluster":"root"}},` +
			`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:authenticated"}]}`)
		for who, cfg := range map[string]*rest.Config{"anonymous": anonymous, "team": team} {
			c, err := rest.UnversionedRESTClientFor(withBaseHost(cfg))
			Expect(err).NotTo(HaveOccurred())
			err = c.Get().AbsPath(cached).Do(ctx).Error()
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s reads the cache server (%v)", who, err)
			err = c.Post().AbsPath(cached).Body(forged).SetHeader("Content-Type", "application/json").Do(ctx).Error()
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s writes to the cache server (%v)", who, err)
		}
		admin, err := hub.ShardAdmin("root")
		Expect(err).NotTo(HaveOccurred())
		c, err := rest.UnversionedRESTClientFor(withBaseHost(admin))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Get().AbsPath(cached).Do(ctx).Error()).To(Succeed(), "the shard's own client (system:masters) reads the cache server")
	})
})

// withBaseHost is cfg at the hub's address without a workspace path, with
// a codec for raw requests.
func withBaseHost(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Host = huburl.Base(cfg.Host)
	cfg.ContentConfig = rest.ContentConfig{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), GroupVersion: &schema.GroupVersion{}}
	return cfg
}
