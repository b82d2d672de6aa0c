// Package bootstrap lays out the fleet workspace topology on a running kcp:
// the workspace types, root:fleet with the fleet and workload APIExports, and
// root:teams. Every step is idempotent, so it runs on each hub start.
package bootstrap

import (
	"context"
	"fmt"
	"time"

	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/kcp/sdk/apis/core"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	kcpclient "github.com/kcp-dev/kcp/sdk/client/clientset/versioned"
	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	fleettenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
	rootconfig "github.com/fleetplane/fleetplane/config/root"
	"github.com/fleetplane/fleetplane/internal/workhomes"
)

// adminUser is kcp's admin identity. Workspaces must be created by a real user,
// not the loopback system:masters identity: kcp records the creator as owner
// and initialises the workspace's default APIBindings on its behalf.
var adminUser = rest.ImpersonationConfig{UserName: "kcp-admin", Groups: []string{"system:kcp:admin"}}

// Run bootstraps the topology with a privileged config pointing at the kcp base
// URL (no /clusters path). It returns once root:fleet serves its APIs.
func Run(ctx context.Context, loopback *rest.Config) error {
	admin := rest.CopyConfig(loopback)
	admin.Impersonate = adminUser
	logger := klog.FromContext(ctx).WithName("fleet-bootstrap")
	start := time.Now()

	root, err := newClients(admin, core.RootCluster.Path())
	if err != nil {
		return err
	}
	if err := rootconfig.Bootstrap(ctx, root.discovery, root.dynamic); err != nil {
		return fmt.Errorf("bootstrapping root workspace: %w", err)
	}
	for _, ws := range []string{rootconfig.FleetWorkspace, rootconfig.TeamsWorkspace} {
		if err := waitWorkspaceReady(ctx, root.kcp, ws); err != nil {
			return err
		}
	}

	fleet, err := newClients(admin, fleettenancyv1alpha1.FleetWorkspace)
	if err != nil {
		return err
	}
	if err := fleetconfig.Bootstrap(ctx, fleet.discovery, fleet.dynamic); err != nil {
		return fmt.Errorf("bootstrapping %s: %w", fleettenancyv1alpha1.FleetWorkspace, err)
	}
	for _, b := range fleetconfig.Exports {
		if err := waitBindingBound(ctx, fleet.kcp, b); err != nil {
			return err
		}
	}
	logger.Info("fleet workspaces ready", "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

type clients struct {
	discovery discovery.DiscoveryInterface
	dynamic   dynamic.Interface
	kcp       kcpclient.Interface
}

func newClients(admin *rest.Config, path logicalcluster.Path) (*clients, error) {
	cfg := rest.CopyConfig(admin)
	cfg.Host += path.RequestPath()
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kcp, err := kcpclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{discovery: disc, dynamic: dyn, kcp: kcp}, nil
}

func waitWorkspaceReady(ctx context.Context, c kcpclient.Interface, name string) error {
	return poll(ctx, fmt.Sprintf("workspace root:%s to become Ready", name), func(ctx context.Context) (bool, error) {
		ws, err := c.TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, err
	})
}

func waitBindingBound(ctx context.Context, c kcpclient.Interface, name string) error {
	return poll(ctx, fmt.Sprintf("APIBinding %s in %s to become Bound", name, fleettenancyv1alpha1.FleetWorkspace), func(ctx context.Context) (bool, error) {
		return bindingBound(ctx, c, name)
	})
}

// bindingBound says whether the APIBinding name is Bound.
func bindingBound(ctx context.Context, c kcpclient.Interface, name string) (bool, error) {
	b, err := c.ApisV1alpha2().APIBindings().Get(ctx, name, metav1.GetOptions{})
	return err == nil && b.Status.Phase == apisv1alpha2.APIBindingPhaseBound, err
}

// poll retries cond until it holds; errors count as "not yet" (the objects
// were just created and caches may lag) and the last one is reported on timeout.
func poll(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		done, err := cond(ctx)
		lastErr = err
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last error: %v)", what, err, lastErr)
	}
	return nil
}

// Bootstrapped waits, as long as ctx lasts, until root:fleet serves its
// APIs as Run leaves it. A shard other than root builds its controllers on
// root:fleet, which the root shard bootstraps: it may start first, or while
// the root shard is down. fleet is a privileged config of root:fleet.
func Bootstrapped(ctx context.Context, fleet *rest.Config) error {
	c, err := kcpclient.NewForConfig(fleet)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithName("fleet-bootstrap")
	var reported time.Time
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range fleetconfig.Exports {
			bound, err := bindingBound(ctx, c, name)
			if bound {
				continue
			}
			if time.Since(reported) > 30*time.Second {
				reported = time.Now()
				logger.Info("waiting for the root shard to bootstrap "+fleettenancyv1alpha1.FleetWorkspace.String(), "apiBinding", name, "err", err)
			}
			return false, nil
		}
		return true, nil
	})
}

// WorkHome makes sure the works workspace of a shard other than root exists
// and serves Work, and returns its logical cluster: root:fleet:works-<shard>,
// placed on that shard. The shard's controllers keep the Works of the team
// workspaces it holds there, so that a rollout never waits on the root
// shard, which WorkHome alone needs (at every start). fleet is a privileged
// config of root:fleet on the root shard, loopback the shard's own.
func WorkHome(ctx context.Context, fleet, loopback *rest.Config, shard string) (logicalcluster.Name, error) {
	fleetAdmin := rest.CopyConfig(fleet)
	fleetAdmin.Impersonate = adminUser
	c, err := kcpclient.NewForConfig(fleetAdmin)
	if err != nil {
		return "", err
	}
	name := workhomes.WorkspaceName(shard)
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1alpha1.WorkspaceSpec{
		Type:     &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: core.RootCluster.String()},
		Location: &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": shard}}},
	}}
	if _, err := c.TenancyV1alpha1().Workspaces().Create(ctx, ws, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating the works workspace %s:%s: %w", fleettenancyv1alpha1.FleetWorkspace, name, err)
	}
	var cluster logicalcluster.Name
	err = poll(ctx, fmt.Sprintf("workspace %s:%s to become Ready", fleettenancyv1alpha1.FleetWorkspace, name), func(ctx context.Context) (bool, error) {
		ws, err := c.TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil || ws.Status.Phase != corev1alpha1.LogicalClusterPhaseReady {
			return false, err
		}
		cluster = logicalcluster.Name(ws.Spec.Cluster)
		return true, nil
	})
	if err != nil {
		return "", err
	}
	admin := rest.CopyConfig(loopback)
	admin.Impersonate = adminUser
	home, err := newClients(admin, cluster.Path())
	if err != nil {
		return "", err
	}
	err = poll(ctx, fmt.Sprintf("the Work API in %s:%s", fleettenancyv1alpha1.FleetWorkspace, name), func(ctx context.Context) (bool, error) {
		if err := fleetconfig.BootstrapWorkHome(ctx, home.discovery, home.dynamic); err != nil {
			return false, err
		}
		return bindingBound(ctx, home.kcp, fleetconfig.PlacementExport)
	})
	return cluster, err
}
