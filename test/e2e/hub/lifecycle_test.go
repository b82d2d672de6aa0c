package hub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var (
	crpV1      = schema.GroupVersionKind{Group: "placement.kubernetes-fleet.io", Version: "v1", Kind: "ClusterResourcePlacement"}
	crpV1beta1 = schema.GroupVersionKind{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: "ClusterResourcePlacement"}
	rpV1       = schema.GroupVersionKind{Group: "placement.kubernetes-fleet.io", Version: "v1", Kind: "ResourcePlacement"}
	rpV1beta1  = schema.GroupVersionKind{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: "ResourcePlacement"}
)

func getAs(ctx SpecContext, c client.Client, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	ExpectWithOffset(1, c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)).To(Succeed(), "%s %s/%s", gvk, namespace, name)
	return u
}

// field returns the value at path in u, or nil.
func field(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}

var _ = Describe("Placements in a team workspace", func() {
	It("accepts ClusterResourcePlacement and ResourcePlacement in v1 and v1beta1 and serves each in both", func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("versions"))
		Expect(err).NotTo(HaveOccurred())
		c, err := hub.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Create(ctx, framework.Namespace("app"))).To(Succeed())

		Expect(c.Create(ctx, decode(`apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: in-v1}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
  policy: {placementType: PickN, numberOfClusters: 2}`))).To(Succeed())
		Expect(c.Create(ctx, decode(`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: in-v1beta1}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]`))).To(Succeed())
		Expect(c.Create(ctx, decode(`apiVersion: placement.kubernetes-fleet.io/v1
kind: ResourcePlacement
metadata: {name: rp-v1, namespace: app}
spec:
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {placementType: PickFixed, clusterNames: [member-1]}`))).To(Succeed())
		Expect(c.Create(ctx, decode(`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata: {name: rp-v1beta1, namespace: app}
spec:
  resourceSelectors: [{group: "", version: v1, kind: ConfigMap, name: settings}]`))).To(Succeed())

		for _, gvk := range []schema.GroupVersionKind{crpV1, crpV1beta1} {
			got := getAs(ctx, c, gvk, "", "in-v1")
			Expect(got.GetAPIVersion()).To(Equal(gvk.GroupVersion().String()))
			Expect(field(got, "spec", "policy", "numberOfClusters")).To(BeEquivalentTo(2))
			got = getAs(ctx, c, gvk, "", "in-v1beta1")
			// Defaults from the schema apply whichever version was used.
			Expect(field(got, "spec", "strategy", "type")).To(Equal("RollingUpdate"))
			Expect(field(got, "spec", "revisionHistoryLimit")).To(BeEquivalentTo(10))
		}
		for _, gvk := range []schema.GroupVersionKind{rpV1, rpV1beta1} {
			got := getAs(ctx, c, gvk, "app", "rp-v1")
			Expect(field(got, "spec", "policy", "clusterNames")).To(Equal([]any{"member-1"}))
			getAs(ctx, c, gvk, "app", "rp-v1beta1")
		}
	})
})

var _ = Describe("Hub restart", Serial, func() {
	It("keeps workspaces, bindings and objects", func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("restart"))
		Expect(err).NotTo(HaveOccurred())
		c, err := hub.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Create(ctx, framework.Namespace("app"))).To(Succeed())
		Expect(c.Create(ctx, decode(crp("survivor", selectNS)))).To(Succeed())
		Expect(c.Create(ctx, decode(rp("survivor", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]`)))).To(Succeed())

		Expect(hub.Restart(ctx)).To(Succeed())

		ws, err := hub.KCP("root:teams").TenancyV1alpha1().Workspaces().Get(ctx, path[len("root:teams:"):], metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ws.Status.Phase).To(Equal(corev1alpha1.LogicalClusterPhaseReady))
		Expect(hub.WaitBindingsBound(ctx, path, "placement.kubernetes-fleet.io", "kubernetes")).To(Succeed())
		c, err = hub.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		getAs(ctx, c, crpV1beta1, "", "survivor")
		getAs(ctx, c, rpV1, "app", "survivor")

		By("creating a new team workspace after the restart")
		_, err = hub.CreateTeamWorkspace(ctx, framework.UniqueName("after-restart"))
		Expect(err).NotTo(HaveOccurred())
	})
})

var _ = Describe("A hub killed during its first bootstrap", Serial, func() {
	It("finishes the bootstrap when it starts again", func(ctx SpecContext) {
		crashed, err := localfleet.LaunchHub(localfleet.HubOptions{RootDir: filepath.Join(framework.SuiteDir("fleet-hub-crash-e2e-"), "hub")})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(crashed.Stop)

		By("killing it while kcp installs the CRDs behind the fleet's API bindings")
		// The window is short and not always seen; a kill before or after it
		// must be survived as well.
		Eventually(func() bool { return installingBoundCRDs(ctx, crashed) || crashed.Ready(ctx) }).
			WithTimeout(3 * time.Minute).WithPolling(20 * time.Millisecond).Should(BeTrue())
		crashed.Kill()

		Expect(crashed.Start(ctx)).To(Succeed())
		path, err := crashed.CreateTeamWorkspace(ctx, framework.UniqueName("after-crash"))
		Expect(err).NotTo(HaveOccurred())
		Expect(crashed.WaitBindingsBound(ctx, path, "placement.kubernetes-fleet.io", "kubernetes")).To(Succeed())
	})
})

var _ = Describe("Hub on an external etcd", Serial, func() {
	It("bootstraps and serves team workspaces with its state in that etcd", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		etcd, err := localfleet.StartEtcd(ctx, filepath.Join(dir, "etcd"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(etcd.Stop)

		h, err := localfleet.StartHub(ctx, localfleet.HubOptions{RootDir: filepath.Join(dir, "hub"), EtcdServers: []string{etcd.ClientURL}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(h.Stop)

		_, err = os.Stat(filepath.Join(dir, "hub", "etcd-server"))
		Expect(os.IsNotExist(err)).To(BeTrue(), "no embedded etcd data may be written")
		path, err := h.CreateTeamWorkspace(ctx, "team-x")
		Expect(err).NotTo(HaveOccurred())
		c, err := h.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Create(ctx, framework.Namespace("app"))).To(Succeed())
		Expect(c.Create(ctx, decode(crp("on-etcd", selectNS)))).To(Succeed())

		Expect(storedValue(ctx, etcd, "on-etcd")).To(HavePrefix("fleet:zstd:"), "objects are stored compressed")

		By("restarting on the same etcd with compression off")
		Expect(h.RestartWith(ctx, "--etcd-compression=false")).To(Succeed())
		c, err = h.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		getAs(ctx, c, crpV1, "", "on-etcd")
		Expect(c.Create(ctx, decode(crp("uncompressed", selectNS)))).To(Succeed())
		Expect(storedValue(ctx, etcd, "uncompressed")).To(HavePrefix("{"))

		By("restarting with compression on again, and watch caches that read both forms")
		Expect(h.RestartWith(ctx, "--watch-cache")).To(Succeed())
		c, err = h.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		getAs(ctx, c, crpV1, "", "on-etcd")
		getAs(ctx, c, crpV1, "", "uncompressed")
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(crpV1.GroupVersion().WithKind("ClusterResourcePlacementList"))
		Expect(c.List(ctx, list, client.Limit(10))).To(Succeed())
		var names []string
		for _, p := range list.Items {
			names = append(names, p.GetName())
		}
		Expect(names).To(ConsistOf("on-etcd", "uncompressed"))
	})
})

// storedValue is the value etcd holds for the placement named name.
func storedValue(ctx context.Context, etcd *localfleet.Etcd, name string) string {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 10 * time.Second})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer c.Close()
	resp, err := c.Get(ctx, "/", clientv3.WithPrefix())
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/clusterresourceplacements/") && strings.HasSuffix(string(kv.Key), "/"+name) {
			return string(kv.Value)
		}
	}
	Fail("no etcd key for the placement " + name)
	return ""
}

// installingBoundCRDs tells whether kcp has CRDs for API bindings whose
// names are accepted but that are not established yet.
func installingBoundCRDs(ctx context.Context, h *localfleet.Hub) bool {
	cfg, err := h.ShardAdmin("system:bound-crds")
	if err != nil {
		return false
	}
	cfg.Timeout = time.Second
	c, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return false
	}
	crds, err := c.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, crd := range crds.Items {
		if apiextensionshelpers.IsCRDConditionTrue(&crd, apiextensionsv1.NamesAccepted) &&
			!apiextensionshelpers.IsCRDConditionTrue(&crd, apiextensionsv1.Established) {
			GinkgoWriter.Printf("CRD %s is installing\n", crd.Name)
			return true
		}
	}
	return false
}
