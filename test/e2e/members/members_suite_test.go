package members

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// The suite runs one hub and three real member clusters with their syncers.
var (
	hub     *localfleet.Hub
	members framework.Members
	scheme  = framework.NewScheme(apiextensionsv1.AddToScheme)
)

func TestMembers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Member clusters suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// Short enough for the specs to watch a member go unhealthy and leave.
	hub, members = framework.StartFleet(ctx, "fleet-members-e2e-",
		[]string{"--cluster-unhealthy-threshold", "15s", "--force-delete-wait-time", "1m"},
		[]localfleet.MemberSpec{
			{Name: "member-1", Labels: map[string]string{"region": "eastus", "env": "prod"}, Nodes: localfleet.Nodes("m1", 2, "4", "16Gi", map[string]string{"zone": "1"})},
			{Name: "member-2", Labels: map[string]string{"region": "westus", "env": "prod"}, Nodes: localfleet.Nodes("m2", 3, "8", "32Gi", nil)},
			{Name: "member-3", Labels: map[string]string{"region": "eastus", "env": "canary"}, Nodes: localfleet.Nodes("m3", 1, "2", "8Gi", nil)},
		})
}, NodeTimeout(10*60e9))

// fleetClient is a client for root:fleet with the hub controllers' privilege:
// this suite writes Work itself, as the work generator would.
func fleetClient() client.Client {
	c, err := hub.ControllerClient("root:fleet", scheme)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return c
}

// syncerClient acts on the hub with the credential join issued m's syncer.
func syncerClient(m *localfleet.Member) (*rest.Config, client.Client) {
	cfg, err := clientcmd.BuildConfigFromFlags("", m.SyncerHubKubeconfig())
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cfg, c
}

// newWork builds a Work for a member from objects.
func newWork(memberName, name string, objs ...any) *placementv1beta1.Work {
	w := &placementv1beta1.Work{}
	w.Name = name
	w.Namespace = "fleet-member-" + memberName
	for _, o := range objs {
		raw, err := json.Marshal(o)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}
