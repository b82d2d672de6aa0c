package localfleet

import (
	"context"
	"fmt"
	"time"

	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	kcpclient "github.com/kcp-dev/kcp/sdk/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	fleettenancy "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// KCP returns a kcp clientset for the workspace at path.
func (h *Hub) KCP(path string) kcpclient.Interface {
	return kcpclient.NewForConfigOrDie(h.Config(path))
}

// CreateTeamWorkspace creates root:teams:<name> (type fleet-team) and waits
// until it is Ready and its default APIBindings are bound and discoverable.
func (h *Hub) CreateTeamWorkspace(ctx context.Context, name string) (string, error) {
	return h.createTeamWorkspace(ctx, &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// CreateTeamWorkspaceOn creates root:teams:<name> on the shard of a hub of
// several named shard (kcp labels each Shard with its name), and waits as
// CreateTeamWorkspace does.
func (h *Hub) CreateTeamWorkspaceOn(ctx context.Context, name, shard string) (string, error) {
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1alpha1.WorkspaceSpec{
		Location: &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": shard}}},
	}}
	return h.createTeamWorkspace(ctx, ws)
}

func (h *Hub) createTeamWorkspace(ctx context.Context, ws *tenancyv1alpha1.Workspace) (string, error) {
	name := ws.Name
	if err := retry(ctx, func() error {
		_, err := h.KCP(fleettenancy.TeamsWorkspace.String()).TenancyV1alpha1().Workspaces().Create(ctx, ws, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		return "", fmt.Errorf("creating workspace root:teams:%s: %w", name, err)
	}
	path := fleettenancy.TeamsWorkspace.Join(name).String()
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		ws, err := h.KCP(fleettenancy.TeamsWorkspace.String()).TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, nil
	})
	if err != nil {
		return "", fmt.Errorf("workspace %s not ready: %w", path, err)
	}
	return path, h.WaitBindingsBound(ctx, path, "placement.kubernetes-fleet.io", "kubernetes")
}

// TeamWorkspaceCluster is the logical cluster of root:teams:<name>.
func (h *Hub) TeamWorkspaceCluster(ctx context.Context, name string) (string, error) {
	ws, err := h.KCP(fleettenancy.TeamsWorkspace.String()).TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return ws.Spec.Cluster, nil
}

// DeleteTeamWorkspace deletes root:teams:<name> and waits until it is gone.
func (h *Hub) DeleteTeamWorkspace(ctx context.Context, name string) error {
	teams := h.KCP(fleettenancy.TeamsWorkspace.String()).TenancyV1alpha1().Workspaces()
	if err := teams.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting workspace root:teams:%s: %w", name, err)
	}
	return poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := teams.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// WaitBindingsBound waits until the workspace has a Bound APIBinding to each
// of the named root:fleet exports and discovery serves their groups.
func (h *Hub) WaitBindingsBound(ctx context.Context, path string, exports ...string) error {
	want := map[string]bool{}
	for _, e := range exports {
		want[e] = true
	}
	var missing []string
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		list, err := h.KCP(path).ApisV1alpha2().APIBindings().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		bound := map[string]bool{}
		for _, b := range list.Items {
			if ref := b.Spec.Reference.Export; ref != nil && ref.Path == fleettenancy.FleetWorkspace.String() && b.Status.Phase == apisv1alpha2.APIBindingPhaseBound {
				bound[ref.Name] = true
			}
		}
		missing = missing[:0]
		for e := range want {
			if !bound[e] {
				missing = append(missing, e)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("APIBindings in %s not bound: %v: %w", path, missing, err)
	}
	return h.WaitServed(ctx, path, schema.GroupVersion{Group: "placement.kubernetes-fleet.io", Version: "v1beta1"})
}

// WaitServed waits until discovery in the workspace lists the group version;
// kinds from a fresh binding take a moment to appear.
func (h *Hub) WaitServed(ctx context.Context, path string, gv schema.GroupVersion) error {
	dc := discovery.NewDiscoveryClientForConfigOrDie(h.Config(path))
	return poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := dc.ServerResourcesForGroupVersion(gv.String())
		return err == nil, nil
	})
}

func poll(ctx context.Context, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, cond)
}

// retry repeats fn on errors for a short while: a freshly created workspace
// type or binding may not be known to admission yet.
func retry(ctx context.Context, fn func() error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		last = fn()
		return last == nil, nil
	})
	if err != nil {
		return last
	}
	return nil
}
