// Package root holds what the hub installs into the kcp root workspace: the
// fleet workspace types and the two top-level workspaces root:fleet and
// root:teams.
package root

import (
	"context"
	"embed"

	confighelpers "github.com/kcp-dev/kcp/config/helpers"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// Workspace names under root and the workspace type of team workspaces.
const (
	FleetWorkspace    = "fleet"
	TeamsWorkspace    = "teams"
	TeamWorkspaceType = "fleet-team"
)

//go:embed *.yaml
var fs embed.FS

// Bootstrap creates or updates everything in this package inside root,
// retrying until all objects are accepted or ctx ends.
func Bootstrap(ctx context.Context, discoveryClient discovery.DiscoveryInterface, dynamicClient dynamic.Interface) error {
	return confighelpers.Bootstrap(ctx, discoveryClient, dynamicClient, sets.New[string](), fs)
}
