package framework

import (
	"context"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// Team is a team workspace and a client of the team's own identity: a
// service account that is cluster-admin in that workspace and nowhere else
// (localfleet.Hub.TeamAdmin). Tenant features are tested with it, never
// with the hub admin.
type Team struct {
	Path string
	// Config is the team identity's config for its own workspace.
	Config *rest.Config
	Client client.Client
}

// NewTeam creates a team workspace of its own for a spec,
// root:teams:<UniqueName(prefix)>, and gives it its team admin.
func NewTeam(ctx context.Context, hub *localfleet.Hub, s *runtime.Scheme, prefix string) *Team {
	path, err := hub.CreateTeamWorkspace(ctx, UniqueName(prefix))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return teamIn(ctx, hub, s, path)
}

// TeamIn gives the team workspace at path its team admin.
func TeamIn(ctx context.Context, hub *localfleet.Hub, s *runtime.Scheme, path string) *Team {
	return teamIn(ctx, hub, s, path)
}

// teamIn is TeamIn for its two callers (offset 2).
func teamIn(ctx context.Context, hub *localfleet.Hub, s *runtime.Scheme, path string) *Team {
	cfg, err := hub.TeamAdmin(ctx, path, "team-admin")
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: s})
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	return &Team{Path: path, Config: cfg, Client: c}
}

// Create creates objects in the team's workspace, as the team.
func (t *Team) Create(ctx context.Context, objs ...client.Object) {
	for _, o := range objs {
		ExpectWithOffset(1, t.Client.Create(ctx, o)).To(Succeed(), "creating %T %s in %s", o, o.GetName(), t.Path)
	}
}
