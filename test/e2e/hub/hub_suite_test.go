package hub

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// hub is the one embedded hub the whole suite runs against.
var hub *localfleet.Hub

func TestHub(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Hub suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	dir := framework.SuiteDir("fleet-hub-e2e-")
	var err error
	hub, err = localfleet.StartHub(ctx, localfleet.HubOptions{RootDir: filepath.Join(dir, "hub")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })
}, NodeTimeout(5*60e9))
