// Package placement is the end-to-end suite of the placement pipeline: teams
// create ClusterResourcePlacements and ResourcePlacements in their own
// workspaces on a real hub, and the specs check what lands on four real
// member clusters (kube-apiservers with kwok nodes, each with its syncer) and
// what the placements report.
package placement

import (
	"testing"
	"time"

	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// The fleet of the suite. Sizes and labels are chosen so that the seeds'
// examples have one right answer:
//
//	member    region      env      nodes  CPU/node  total CPU  critical-allowed  critical-level
//	member-1  eastus      prod     3      4         12         true              1
//	member-2  westus      prod     2      8         16         true              1
//	member-3  eastus      canary   1      2         2          true              -
//	member-4  westeurope  staging  2      2         4          -                 -
//
// No spec requests CPU on the members, so available CPU stays at the totals.
var memberSpecs = []localfleet.MemberSpec{
	{Name: "member-1", Labels: map[string]string{"region": "eastus", "env": "prod", "critical-allowed": "true", "critical-level": "1"},
		Nodes: localfleet.Nodes("m1", 3, "4", "16Gi", nil)},
	{Name: "member-2", Labels: map[string]string{"region": "westus", "env": "prod", "critical-allowed": "true", "critical-level": "1"},
		Nodes: localfleet.Nodes("m2", 2, "8", "32Gi", nil)},
	{Name: "member-3", Labels: map[string]string{"region": "eastus", "env": "canary", "critical-allowed": "true"},
		Nodes: localfleet.Nodes("m3", 1, "2", "8Gi", nil)},
	{Name: "member-4", Labels: map[string]string{"region": "westeurope", "env": "staging"},
		Nodes: localfleet.Nodes("m4", 2, "2", "8Gi", nil)},
}

var (
	hub     *localfleet.Hub
	hubEtcd *localfleet.Etcd
	// shards: how many shards the hub has (FLEET_E2E_SHARDS).
	shards  int
	members framework.Members
	scheme  = framework.NewScheme(tenancyv1alpha1.AddToScheme, apiextensionsv1.AddToScheme, corev1alpha1.AddToScheme, inventoryv1alpha1.AddToScheme, apisv1alpha2.AddToScheme)
)

const (
	timeout  = 2 * time.Minute
	interval = 250 * time.Millisecond
)

func TestPlacement(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Placement suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	SetDefaultConsistentlyPollingInterval(time.Second)

	// A member that leaves is let go quickly; an unhealthy one is noticed
	// within a few heartbeats (join sets them to 5s).
	hubArgs := []string{"--cluster-unhealthy-threshold", "15s", "--force-delete-wait-time", "1m"}
	var err error
	shards, err = framework.Shards()
	Expect(err).NotTo(HaveOccurred())
	if shards > 1 {
		// FLEET_E2E_SHARDS=2: the same specs on a hub of several shards,
		// whose team workspaces kcp spreads over them.
		hub, members = framework.StartShardedFleet(ctx, "fleet-placement-e2e-", shards, hubArgs, memberSpecs)
		return
	}
	// The hub keeps its state in an etcd of its own, which the fault
	// specs restart under it.
	hub, members, hubEtcd = framework.StartFleetOnEtcd(ctx, "fleet-placement-e2e-", hubArgs, memberSpecs)
}, NodeTimeout(10*time.Minute))
