package members

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/internal/localcluster"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// serviceAccountDir is where a pod finds its service account credentials,
// which rest.InClusterConfig reads.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// decodeManifests splits the multi-document YAML join prints.
func decodeManifests(raw []byte) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// apply server-side applies a manifest object, for real or as a dry run.
func apply(c client.Client, u *unstructured.Unstructured, dryRun bool) error {
	opts := []client.PatchOption{client.FieldOwner("e2e"), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return c.Patch(framework.Ctx(), u.DeepCopy(), client.Apply, opts...)
}

// runAsPod starts the syncer as the Deployment's container would run: its
// command line from the Deployment, in-cluster credentials (the
// KUBERNETES_SERVICE_* variables and a service account token mounted where
// pods have it, in a private mount namespace), the hub kubeconfig from the
// Secret.
func runAsPod(member *localcluster.Cluster, d *appsv1.Deployment, token, hubKubeconfig []byte, dir string) *exec.Cmd {
	sa := filepath.Join(dir, "serviceaccount")
	Expect(os.MkdirAll(sa, 0o700)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(sa, "token"), token, 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(sa, "ca.crt"), member.Config().CAData, 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(sa, "namespace"), []byte(d.Namespace), 0o600)).To(Succeed())
	hubFile := filepath.Join(dir, "hub.kubeconfig")
	Expect(os.WriteFile(hubFile, hubKubeconfig, 0o600)).To(Succeed())

	container := d.Spec.Template.Spec.Containers[0]
	var args []string
	for _, a := range container.Args {
		// The Secret's mount point, /etc/fleet/hub, becomes a file here.
		if strings.HasPrefix(a, "--hub-kubeconfig=") {
			a = "--hub-kubeconfig=" + hubFile
		}
		Expect(a).NotTo(HavePrefix("--member-kubeconfig"), "the syncer in the member uses in-cluster credentials")
		args = append(args, a)
	}
	args = append(args, "--metrics-bind-address=0")
	// A tmpfs over /run (/var/run) in a mount namespace of its own holds the
	// token where a pod has it, without touching the host's /run.
	script := `mount -t tmpfs tmpfs /run && mkdir -p "$SA_DIR" && cp "$SA_SRC"/* "$SA_DIR"/ && exec "$@"`
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", filepath.Join(localfleet.BinDir(), "fleet-syncer")}, args...)...)
	u, err := url.Parse(member.Config().Host)
	Expect(err).NotTo(HaveOccurred())
	cmd.Env = append(os.Environ(), "SA_DIR="+serviceAccountDir, "SA_SRC="+sa,
		"KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port())
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	return cmd
}

var _ = Describe("A syncer inside its member cluster", Serial, func() {
	It("runs from the manifests join prints: valid on a real API server, with in-cluster credentials", func(sctx SpecContext) {
		dir := GinkgoT().TempDir()
		m9, err := localcluster.Start(sctx, localcluster.Options{Name: "member-9", Nodes: localfleet.Nodes("m9", 1, "2", "8Gi", nil), BinDir: localfleet.BinDir(), Dir: dir})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(m9.Stop)
		m9Client, err := client.New(m9.Config(), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())

		By("join without --run prints the manifests for the image")
		join := exec.Command(filepath.Join(localfleet.BinDir(), "kubectl-fleet"), "join", "member-9", "--member-kubeconfig", m9.KubeconfigPath,
			"--image", "fleetplane/fleet-syncer:e2e", "--heartbeat-period-seconds", "5", "--kubeconfig", hub.KubeconfigPath())
		join.Stderr = GinkgoWriter
		manifests, err := join.Output()
		Expect(err).NotTo(HaveOccurred())
		// Unjoin while the syncer runs (it confirms leaving), then stop it.
		var syncer *exec.Cmd
		DeferCleanup(func() {
			unjoin := exec.Command(filepath.Join(localfleet.BinDir(), "kubectl-fleet"), "unjoin", "member-9", "--timeout", "1m", "--kubeconfig", hub.KubeconfigPath())
			unjoin.Stdout, unjoin.Stderr = GinkgoWriter, GinkgoWriter
			Expect(unjoin.Run()).To(Succeed())
			if syncer != nil {
				_ = syscall.Kill(-syncer.Process.Pid, syscall.SIGKILL)
				_ = syncer.Wait()
			}
		})
		objs := decodeManifests(manifests)
		var kinds []string
		for _, o := range objs {
			kinds = append(kinds, o.GetKind())
		}
		Expect(kinds).To(Equal([]string{"Namespace", "Secret", "ServiceAccount", "ClusterRoleBinding", "Deployment"}))

		By("a server-side dry run accepts every object (the namespace is created first: the others live in it)")
		Expect(apply(m9Client, objs[0], true)).To(Succeed())
		Expect(apply(m9Client, objs[0], false)).To(Succeed())
		for _, o := range objs[1:] {
			Expect(apply(m9Client, o, true)).To(Succeed(), "dry run of %s %s", o.GetKind(), o.GetName())
		}
		Expect(m9Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "fleet-system", Name: "fleet-syncer-hub-kubeconfig"}, &corev1.Secret{})).
			To(MatchError(ContainSubstring("not found")), "a dry run creates nothing")
		for _, o := range objs[1:] {
			Expect(apply(m9Client, o, false)).To(Succeed(), "applying %s %s", o.GetKind(), o.GetName())
		}
		d := &appsv1.Deployment{}
		Expect(m9Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "fleet-system", Name: "fleet-syncer"}, d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("fleetplane/fleet-syncer:e2e"))
		Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal("fleet-syncer"))

		By("the syncer runs as the pod would, with the service account's token, and the member joins")
		kube, err := kubernetes.NewForConfig(m9.Config())
		Expect(err).NotTo(HaveOccurred())
		tok, err := kube.CoreV1().ServiceAccounts("fleet-system").CreateToken(framework.Ctx(), "fleet-syncer", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		secret := &corev1.Secret{}
		Expect(m9Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "fleet-system", Name: "fleet-syncer-hub-kubeconfig"}, secret)).To(Succeed())
		syncer = runAsPod(m9, d, []byte(tok.Status.Token), secret.Data["kubeconfig"], dir)
		Expect(hub.WaitMemberReady(sctx, "member-9")).To(Succeed())

		By("it applies Work to its own cluster")
		w := newWork("member-9", "incluster", &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "from-the-hub"},
			Data:       map[string]string{"via": "in-cluster"},
		})
		Expect(fleetClient().Create(framework.Ctx(), w)).To(Succeed())
		Eventually(func(g Gomega) {
			workAvailable(g, w)
			cm := &corev1.ConfigMap{}
			g.Expect(m9Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "default", Name: "from-the-hub"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("via", "in-cluster"))
		}, timeout, interval).Should(Succeed())
		Expect(fleetClient().Delete(framework.Ctx(), w)).To(Succeed())
		Eventually(func() error {
			return m9Client.Get(framework.Ctx(), client.ObjectKey{Namespace: "default", Name: "from-the-hub"}, &corev1.ConfigMap{})
		}, timeout, interval).Should(MatchError(ContainSubstring("not found")))
	})
})
