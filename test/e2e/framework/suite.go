package framework

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// SuiteDir makes a suite's state directory, removed after a passing run
// unless FLEET_E2E_KEEP=1. Call it from BeforeSuite.
func SuiteDir(prefix string) string {
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
func StartFleet(ctx context.Context, prefix string, hubArgs []string, specs []MemberSpec) (*Hub, []*Member) {
	dir := SuiteDir(prefix)
	hub, err := StartHub(ctx, HubOptions{RootDir: filepath.Join(dir, "hub"), Args: hubArgs})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })

	members, err := hub.StartMembers(ctx, dir, specs)
	DeferCleanup(func() {
		for _, m := range members {
			_ = m.Stop()
		}
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, m := range members {
		ExpectWithOffset(1, hub.WaitMemberReady(ctx, m.Name)).To(Succeed())
	}
	GinkgoWriter.Printf("state of this run: %s\n", dir)
	return hub, members
}

// MemberNamed finds a member of the fleet by name, failing the spec if there
// is none.
func MemberNamed(members []*Member, name string) *Member {
	for _, m := range members {
		if m.Name == name {
			return m
		}
	}
	Fail("no member " + name)
	return nil
}
