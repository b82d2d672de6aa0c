package shards

import (
	"fmt"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// A hub of two shards behind a front-proxy, all three fleet-hub processes
// sharing one directory of authorities, as on one machine.
var (
	root, shard1 *framework.Hub
	proxy        *framework.FrontProxy
	// member joined the hub through the front-proxy: its syncer reads its
	// Work there.
	member *framework.Member
)

func TestShards(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Shards suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	dir := framework.SuiteDir("fleet-shards-e2e-")
	ports, err := framework.FreePorts(3)
	Expect(err).NotTo(HaveOccurred())
	url := func(port int) string { return fmt.Sprintf("https://127.0.0.1:%d", port) }
	pki := filepath.Join(dir, "pki")
	shared := []string{"--shared-pki-dir", pki, "--external-url", url(ports[2])}
	// The root shard is ready once its fleet workspaces are, which kcp
	// creates through the front-proxy: start both, then wait.
	root, err = framework.LaunchHub(framework.HubOptions{RootDir: filepath.Join(dir, "root"), Port: ports[0],
		Args: append([]string{"--shard-base-url", url(ports[0])}, shared...)})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(root.Stop()).To(Succeed()) })
	proxy, err = framework.StartFrontProxy(ctx, framework.FrontProxyOptions{RootDir: filepath.Join(dir, "front-proxy"), PKIDir: pki,
		RootShardURL: url(ports[0]), Port: ports[2]})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(proxy.Stop)
	Expect(root.WaitReady(ctx)).To(Succeed())
	shard1, err = framework.StartHub(ctx, framework.HubOptions{RootDir: filepath.Join(dir, "shard-1"), Port: ports[1],
		Args: append([]string{"--shard-name", "shard-1", "--root-shard-url", url(ports[0]), "--shard-base-url", url(ports[1])}, shared...)})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(shard1.Stop()).To(Succeed()) })

	members, err := proxy.Hub().StartMembers(ctx, dir, []framework.MemberSpec{{Name: "member-1", Nodes: framework.Nodes("member-1", 1, "4", "8Gi", nil)}})
	DeferCleanup(func() {
		for _, m := range members {
			_ = m.Stop()
		}
	})
	Expect(err).NotTo(HaveOccurred())
	member = members[0]
	Expect(proxy.Hub().WaitMemberReady(ctx, member.Name)).To(Succeed())
}, NodeTimeout(8*60e9))

// uniqueName returns a workspace or object name that no other spec uses.
func uniqueName(prefix string) string {
	return prefix + "-" + framework.RandomSuffix()
}
