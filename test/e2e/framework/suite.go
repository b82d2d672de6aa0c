// Package framework holds what the e2e suites share: starting a fleet for
// a suite (the processes themselves are internal/localfleet's), and the
// Ginkgo and Gomega helpers, names and object builders of their specs.
package framework

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// SuiteDir makes a suite's state directory, removed after a passing run
// unless FLEET_E2E_KEEP=1. Call it from BeforeSuite.
func SuiteDir(prefix string) string {
	// The clients' own logs go with the spec's output.
	log.SetLogger(GinkgoLogr)
	dir, err := os.MkdirTemp("", prefix)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if !CurrentSpecReport().Failed() && !KeepArtifacts() {
			os.RemoveAll(dir)
		}
	})
	return dir
}

// StartFleet starts a hub with the given flags and joins member clusters to
// it, all stopped when the suite ends, and waits until every member is
// Joined and healthy. Call it from BeforeSuite.
func StartFleet(ctx context.Context, prefix string, hubArgs []string, specs []localfleet.MemberSpec) (*localfleet.Hub, Members) {
	dir := SuiteDir(prefix)
	hub, err := localfleet.StartHub(ctx, localfleet.HubOptions{RootDir: filepath.Join(dir, "hub"), Args: hubArgs})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })
	return hub, startMembers(ctx, dir, hub, specs)
}

// StartFleetOnEtcd is StartFleet with the hub's state in an etcd of its
// own, which a spec can restart under the running hub.
func StartFleetOnEtcd(ctx context.Context, prefix string, hubArgs []string, specs []localfleet.MemberSpec) (*localfleet.Hub, Members, *localfleet.Etcd) {
	dir := SuiteDir(prefix)
	etcd, err := localfleet.StartEtcd(ctx, filepath.Join(dir, "etcd"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(etcd.Stop)
	hub, err := localfleet.StartHub(ctx, localfleet.HubOptions{RootDir: filepath.Join(dir, "hub"), Args: hubArgs, EtcdServers: []string{etcd.ClientURL}})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })
	return hub, startMembers(ctx, dir, hub, specs), etcd
}

// StartShardedFleet is StartFleet on a hub of the given number of shards
// behind a front-proxy (see localfleet.ShardedHub), each shard on its embedded etcd;
// the members join through the front-proxy.
func StartShardedFleet(ctx context.Context, prefix string, shards int, hubArgs []string, specs []localfleet.MemberSpec) (*localfleet.Hub, Members) {
	dir := SuiteDir(prefix)
	sharded, err := localfleet.StartShardedHub(ctx, localfleet.ShardedHubOptions{Dir: dir, Shards: shards, Args: hubArgs})
	DeferCleanup(func() {
		if sharded != nil {
			Expect(sharded.Stop()).To(Succeed())
		}
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	hub := sharded.Hub()
	return hub, startMembers(ctx, dir, hub, specs)
}

func startMembers(ctx context.Context, dir string, hub *localfleet.Hub, specs []localfleet.MemberSpec) Members {
	members, err := hub.StartMembers(ctx, dir, specs)
	DeferCleanup(func() {
		for _, m := range members {
			_ = m.Stop()
		}
	})
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	for _, m := range members {
		ExpectWithOffset(2, hub.WaitMemberReady(ctx, m.Name)).To(Succeed())
	}
	GinkgoWriter.Printf("state of this run: %s\n", dir)
	return members
}
