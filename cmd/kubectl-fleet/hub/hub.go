// Package hub gives the kubectl-fleet commands their clients: the workspace
// the kubeconfig's current context points at, and other workspaces of the
// same hub (root:fleet, where member clusters live).
package hub

import (
	"fmt"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	"net/url"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/huburl"
)

// Scheme knows the built-in and fleet kinds, and kcp's LogicalCluster.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme, tenancyv1alpha1.AddToScheme, corev1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Workspace is a client of one workspace.
type Workspace struct {
	Path   logicalcluster.Path
	Config *rest.Config
	client.Client
}

// Current is the workspace of the kubeconfig's current context.
func Current(flags *genericclioptions.ConfigFlags) (*Workspace, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	path, err := pathOf(cfg.Host)
	if err != nil {
		return nil, err
	}
	return connect(cfg, path)
}

// At is another workspace of the same hub as the current context.
func At(flags *genericclioptions.ConfigFlags, path logicalcluster.Path) (*Workspace, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = huburl.For(cfg.Host, path)
	return connect(cfg, path)
}

func connect(cfg *rest.Config, path logicalcluster.Path) (*Workspace, error) {
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("connecting to workspace %s at %s: %w", path, cfg.Host, err)
	}
	return &Workspace{Path: path, Config: cfg, Client: c}, nil
}

// pathOf reads the workspace path of a hub URL (…/clusters/<path>).
func pathOf(host string) (logicalcluster.Path, error) {
	u, err := url.Parse(host)
	if err != nil {
		return logicalcluster.Path{}, fmt.Errorf("server URL %q: %w", host, err)
	}
	i := strings.Index(u.Path, "/clusters/")
	if i < 0 {
		return logicalcluster.Path{}, fmt.Errorf("the current context's server %q is not a Fleetplane hub workspace (expected .../clusters/<workspace>); use a kubeconfig written by fleet-hub and pick a workspace with kubectl ws", host)
	}
	return logicalcluster.NewPath(strings.TrimSuffix(u.Path[i+len("/clusters/"):], "/")), nil
}

// RequirePlacementAPI fails with what to do when the workspace does not
// serve the placement API: the context points at the wrong workspace.
func (w *Workspace) RequirePlacementAPI() error {
	gk := schema.GroupKind{Group: placementv1beta1.GroupVersion.Group, Kind: placementv1beta1.ClusterResourcePlacementKind}
	if _, err := w.RESTMapper().RESTMapping(gk, placementv1beta1.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("workspace %s does not serve the placement API (%s): switch to a team workspace (kubectl ws :root:teams:<team>) or to :root:fleet", w.Path, placementv1beta1.GroupVersion)
		}
		return fmt.Errorf("reading the APIs of workspace %s: %w", w.Path, err)
	}
	return nil
}
