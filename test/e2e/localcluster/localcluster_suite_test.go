package localcluster_test

import (
	"errors"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetplane/fleetplane/internal/localcluster"
	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// The two member clusters every spec runs against: different sizes, regions
// and capacities, so that a spec can tell them apart.
var specs = []localcluster.Options{
	{Name: "member-1", Nodes: []localcluster.NodeSpec{
		{Name: "m1-node-1", Labels: map[string]string{"region": "east", "zone": "east-a"}, CPU: "4", Memory: "16Gi"},
		{Name: "m1-node-2", Labels: map[string]string{"region": "east", "zone": "east-b"}, CPU: "4", Memory: "16Gi"},
		{Name: "m1-node-3", Labels: map[string]string{"region": "east", "zone": "east-c"}, CPU: "4", Memory: "16Gi"},
	}},
	{Name: "member-2", Nodes: []localcluster.NodeSpec{
		{Name: "m2-node-1", Labels: map[string]string{"region": "west", "gpu": "true"}, CPU: "16", Memory: "64Gi"},
	}},
}

var (
	// dir holds the clusters' state and logs; kept when anything failed.
	dir      string
	clusters []*localcluster.Cluster
	clients  []kubernetes.Interface
)

func TestLocalCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Local member cluster suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	dir, err = os.MkdirTemp("", "fleet-localcluster-e2e-")
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("clusters' state and logs", dir)

	start := time.Now()
	clusters, err = localcluster.StartMany(ctx, dir, localfleet.BinDir(), specs)
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("start of both clusters", time.Since(start).String())
	DeferCleanup(func() {
		var errs []error
		for _, c := range clusters {
			errs = append(errs, c.Stop())
		}
		Expect(errors.Join(errs...)).To(Succeed())
	})

	for _, c := range clusters {
		cs, err := kubernetes.NewForConfig(c.Config())
		Expect(err).NotTo(HaveOccurred())
		clients = append(clients, cs)
	}
}, NodeTimeout(5*time.Minute))

// Cleanup nodes cannot tell whether the suite failed; the suite report can.
var _ = ReportAfterSuite("remove the clusters' state unless the suite failed", func(r Report) {
	if r.SuiteSucceeded && dir != "" {
		os.RemoveAll(dir)
	}
})
