package shards

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// A hub of two shards behind a front-proxy, all three fleet-hub processes
// sharing one directory of authorities, as on one machine.
var (
	root, shard1 *localfleet.Hub
	proxy        *localfleet.FrontProxy
	// member joined the hub through the front-proxy: its syncer reads its
	// Work there.
	member *localfleet.Member
)

func TestShards(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Shards suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	dir := framework.SuiteDir("fleet-shards-e2e-")
	sharded, err := localfleet.StartShardedHub(ctx, localfleet.ShardedHubOptions{Dir: dir, Shards: 2})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(sharded.Stop()).To(Succeed()) })
	root, shard1, proxy = sharded.Shards[0], sharded.Shards[1], sharded.Proxy

	members, err := proxy.Hub().StartMembers(ctx, dir, []localfleet.MemberSpec{{Name: "member-1", Nodes: localfleet.Nodes("member-1", 1, "4", "8Gi", nil)}})
	DeferCleanup(func() {
		for _, m := range members {
			_ = m.Stop()
		}
	})
	Expect(err).NotTo(HaveOccurred())
	member = members[0]
	Expect(proxy.Hub().WaitMemberReady(ctx, member.Name)).To(Succeed())
}, NodeTimeout(8*60e9))
