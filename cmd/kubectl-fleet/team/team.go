// Package team implements `kubectl fleet team create`: a team's workspace
// under root:teams, the ClusterGrant that gives it its clusters, and the
// team's admins; and `kubectl fleet team usage`: what a team keeps on the
// hub against its limits.
package team

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	kcptenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	kcpclient "github.com/kcp-dev/kcp/sdk/client/clientset/versioned"
	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/ws"
)

type createOptions struct {
	flags       *genericclioptions.ConfigFlags
	out         io.Writer
	clusters    string
	clustersSet bool
	users       []string
	groups      []string
}

// NewCommand returns `kubectl fleet team`.
func NewCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "team", Short: "Manage team workspaces"}
	o := &createOptions{flags: flags, out: streams.Out}
	create := &cobra.Command{
		Use:   "create NAME [--clusters SELECTOR] [--admin-user USER]... [--admin-group GROUP]...",
		Short: "Create a team workspace and grant it member clusters",
		Long: `Creates the workspace root:teams:NAME (bound to the placement API), a
ClusterGrant NAME in root:fleet that gives it the member clusters matching
--clusters (a label selector; empty means every cluster), and a
ClusterRoleBinding team-admins making the given users and groups admins of
the workspace. Run it with hub admin credentials. Re-running it updates the
admins, and the grant's clusters if --clusters is given.`,
		Example: `  kubectl fleet team create payments --clusters env=prod,region=eastus --admin-group payments-devs
  kubectl fleet team create sandbox --clusters 'env in (dev,staging)' --admin-user alice`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.clustersSet = cmd.Flags().Changed("clusters")
			return o.create(cmd.Context(), args[0])
		},
	}
	f := create.Flags()
	f.StringVar(&o.clusters, "clusters", "", "label selector of the member clusters the team may use (kubectl -l syntax); empty: all clusters")
	f.StringSliceVar(&o.users, "admin-user", nil, "user to make an admin of the team workspace (repeatable)")
	f.StringSliceVar(&o.groups, "admin-group", nil, "group to make admins of the team workspace (repeatable)")
	cmd.AddCommand(create, newUsageCommand(flags, streams.Out))
	return cmd
}

func (o *createOptions) create(ctx context.Context, name string) error {
	selector, err := metav1.ParseToLabelSelector(o.clusters)
	if err != nil {
		return fmt.Errorf("--clusters %q is not a label selector: %w", o.clusters, err)
	}
	path := tenancyv1alpha1.TeamsWorkspace.Join(name)
	if err := o.workspace(ctx, name); err != nil {
		return err
	}
	team, err := o.waitPlacementAPI(ctx, path)
	if err != nil {
		return err
	}
	if err := o.admins(ctx, team); err != nil {
		return err
	}
	fleet, err := hub.At(o.flags, tenancyv1alpha1.FleetWorkspace)
	if err != nil {
		return err
	}
	grant, err := o.grant(ctx, fleet, name, path, selector)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "team workspace %s is ready; ClusterGrant %s gives it %d member cluster(s)%s\n", path, grant.Name, grant.Status.ClusterCount, listed(grant.Status.Clusters))
	fmt.Fprintf(o.out, "next: kubectl ws :%s, then create placements there\n", path)
	return nil
}

func (o *createOptions) workspace(ctx context.Context, name string) error {
	teams, err := hub.At(o.flags, tenancyv1alpha1.TeamsWorkspace)
	if err != nil {
		return err
	}
	c, err := kcpclient.NewForConfig(teams.Config)
	if err != nil {
		return err
	}
	_, err = c.TenancyV1alpha1().Workspaces().Create(ctx, &kcptenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		fmt.Fprintf(o.out, "workspace %s exists\n", tenancyv1alpha1.TeamsWorkspace.Join(name))
	case err != nil:
		return fmt.Errorf("creating workspace %s: %w", tenancyv1alpha1.TeamsWorkspace.Join(name), err)
	default:
		fmt.Fprintf(o.out, "workspace %s created\n", tenancyv1alpha1.TeamsWorkspace.Join(name))
	}
	return ws.WaitReady(ctx, c, name, o.out)
}

// waitPlacementAPI waits until the new workspace serves the placement API
// (its bindings to root:fleet's exports are set up by its initializer); a
// fresh client each time, as a client remembers the APIs it found missing.
func (o *createOptions) waitPlacementAPI(ctx context.Context, path logicalcluster.Path) (*hub.Workspace, error) {
	var team *hub.Workspace
	var last error
	err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if team, last = hub.At(o.flags, path); last == nil {
			last = team.RequirePlacementAPI()
		}
		return last == nil, nil
	})
	if err != nil {
		return nil, last
	}
	return team, nil
}

func (o *createOptions) admins(ctx context.Context, team *hub.Workspace) error {
	if len(o.users)+len(o.groups) == 0 {
		return nil
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-admins"}}
	_, err := controllerutil.CreateOrUpdate(ctx, team, crb, func() error {
		crb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
		crb.Subjects = nil
		for _, u := range o.users {
			crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		for _, g := range o.groups {
			crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("making the team's admins admins of %s: %w", team.Path, err)
	}
	fmt.Fprintf(o.out, "admins of %s: %s\n", team.Path, strings.Join(append(append([]string{}, o.users...), o.groups...), ", "))
	return nil
}

func (o *createOptions) grant(ctx context.Context, fleet *hub.Workspace, name string, path logicalcluster.Path, selector *metav1.LabelSelector) (*tenancyv1alpha1.ClusterGrant, error) {
	g := &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, fleet, g, func() error {
		if !slices.Contains(g.Spec.Workspaces, path.String()) {
			g.Spec.Workspaces = append(g.Spec.Workspaces, path.String())
		}
		// Re-running without --clusters (to add admins) keeps the grant's
		// clusters; a new grant without it covers every cluster.
		if o.clustersSet || g.CreationTimestamp.IsZero() {
			g.Spec.ClusterSelector = selector
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("granting clusters to %s: %w", path, err)
	}
	// The grant controller counts the clusters; wait for its verdict.
	err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := fleet.Get(ctx, client.ObjectKeyFromObject(g), g); err != nil {
			return false, nil
		}
		c := meta.FindStatusCondition(g.Status.Conditions, tenancyv1alpha1.ClusterGrantConditionValid)
		return c != nil && c.ObservedGeneration == g.Generation, nil
	})
	if err != nil {
		return nil, fmt.Errorf("ClusterGrant %s in %s was not evaluated: %w", name, tenancyv1alpha1.FleetWorkspace, err)
	}
	if c := meta.FindStatusCondition(g.Status.Conditions, tenancyv1alpha1.ClusterGrantConditionValid); c.Status != metav1.ConditionTrue {
		return nil, fmt.Errorf("ClusterGrant %s: %s", name, c.Message)
	}
	return g, nil
}

func listed(clusters []string) string {
	if len(clusters) == 0 {
		return ""
	}
	return ": " + strings.Join(clusters, ", ")
}
