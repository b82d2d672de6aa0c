package shards

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("A hub of two shards behind the front-proxy", func() {
	It("registers both shards in root and places a team workspace on the shard its location names", func(ctx SpecContext) {
		hub := proxy.Hub()
		shards, err := hub.KCP("root").CoreV1alpha1().Shards().List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(shards.Items).To(ConsistOf(HaveField("Name", "root"), HaveField("Name", "shard-1")))

		for _, shard := range []string{"root", "shard-1"} {
			name := framework.UniqueName("team")
			path, err := hub.CreateTeamWorkspaceOn(ctx, name, shard)
			Expect(err).NotTo(HaveOccurred(), "a team workspace on %s", shard)
			ws, err := hub.KCP("root:teams").TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			// Only the shard that holds a workspace serves it.
			held := root
			if shard == "shard-1" {
				held = shard1
			}
			_, err = kubernetes.NewForConfigOrDie(held.Config(ws.Spec.Cluster)).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "%s is held by %s", path, shard)

			By("a team identity of the workspace works through the front-proxy, its token checked by the shard")
			team, err := hub.TeamAdmin(ctx, path, "team-admin")
			Expect(err).NotTo(HaveOccurred())
			kube := kubernetes.NewForConfigOrDie(team)
			Expect(kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
			_, err = kubernetes.NewForConfigOrDie(hub.WithToken("root:fleet", team.BearerToken)).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			Expect(err).To(HaveOccurred(), "the team's token reaches root:fleet")
		}
	})

	It("moves kubectl ws between workspaces through the front-proxy as on a hub of one", func(ctx SpecContext) {
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "admin.kubeconfig")
		raw, err := os.ReadFile(proxy.KubeconfigPath())
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(kubeconfig, raw, 0o600)).To(Succeed())
		ws := func(args ...string) string {
			out, err := exec.CommandContext(ctx, filepath.Join(localfleet.BinDir(), "kubectl-fleet"), append(append([]string{"ws"}, args...), "--kubeconfig", kubeconfig)...).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "kubectl ws %s\n%s", strings.Join(args, " "), out)
			return strings.TrimSpace(string(out))
		}
		name := framework.UniqueName("cli-ws")
		ws(":root:teams")
		Expect(ws("current", "--short")).To(Equal("root:teams"))
		Expect(ws("create", name, "--enter")).To(ContainSubstring(`Workspace "root:teams:` + name + `" is ready.`))
		Expect(ws("current", "--short")).To(Equal("root:teams:" + name))
		ws("..")
		Expect(ws("tree")).To(ContainSubstring(name))
	})

	It("does not take who a client says it is from the headers it sends", func(ctx SpecContext) {
		hub := proxy.Hub()
		path, err := hub.CreateTeamWorkspaceOn(ctx, framework.UniqueName("team"), "shard-1")
		Expect(err).NotTo(HaveOccurred())
		team, err := hub.TeamAdmin(ctx, path, "team-admin")
		Expect(err).NotTo(HaveOccurred())
		claims := map[string]string{"X-Remote-User": "kcp-admin", "X-Remote-Group": "system:kcp:admin", "X-Remote-Extra-Scopes": "cluster:root"}
		for who, cfg := range map[string]*rest.Config{"anonymous": hub.WithToken("root:fleet", ""), "team": hub.WithToken("root:fleet", team.BearerToken)} {
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return withHeaders{rt, claims} })
			_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			Expect(err).To(HaveOccurred(), "%s claiming to be the hub admin in X-Remote-* headers lists root:fleet's namespaces", who)
		}
	})
})

// withHeaders sends headers with every request.
type withHeaders struct {
	next    http.RoundTripper
	headers map[string]string
}

func (w withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range w.headers {
		r.Header.Set(k, v)
	}
	return w.next.RoundTrip(r)
}
