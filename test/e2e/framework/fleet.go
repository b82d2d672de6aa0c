package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// Ctx is the context of the calls of a spec that does not take its own:
// each returns by itself, and Eventually or the suite's timeout bounds it.
func Ctx() context.Context { return context.Background() }

// Members are the members of a suite's fleet.
type Members []*localfleet.Member

// Named is the member of that name; it fails the spec if there is none.
func (ms Members) Named(name string) *localfleet.Member {
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	Fail("no member " + name)
	return nil
}

// MemberClient is a client of the member cluster m itself.
func MemberClient(m *localfleet.Member, s *runtime.Scheme) client.Client {
	c, err := m.Client(s)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return c
}

// MemberCluster reads the MemberCluster of that name with fleet, a client
// of root:fleet.
func MemberCluster(g Gomega, fleet client.Reader, name string) *clusterv1beta1.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{}
	g.ExpectWithOffset(1, fleet.Get(Ctx(), client.ObjectKey{Name: name}, mc)).To(Succeed())
	return mc
}

// HubUsage is what the hub process holds (localfleet.Hub.Usage).
func HubUsage(g Gomega, hub *localfleet.Hub) localfleet.Usage {
	u, err := hub.Usage()
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return u
}
