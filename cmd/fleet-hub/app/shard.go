package app

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetplane/fleetplane/workspaces/bootstrap"
	"github.com/fleetplane/fleetplane/workspaces/teamadmission"
)

// startShardControllers starts, on a shard other than root, the controllers
// of the workspaces the shard holds. They read members and grants in
// root:fleet on the root shard, reached with the shard's root-shard
// kubeconfig, and keep Work in the shard's works workspace; they start once
// the root shard has bootstrapped root:fleet and the works workspace is
// there.
func startShardControllers(ctx context.Context, loopback *rest.Config, rootShardKubeconfig string, opts controllerOptions, teams *teamadmission.Plugin) error {
	root, err := clientcmd.BuildConfigFromFlags("", rootShardKubeconfig)
	if err != nil {
		return fmt.Errorf("reading the root shard's kubeconfig %s: %w", rootShardKubeconfig, err)
	}
	if err := bootstrap.Bootstrapped(ctx, inFleet(root)); err != nil {
		return err
	}
	opts.WorkHome, err = bootstrap.WorkHome(ctx, inFleet(root), loopback, opts.ShardName)
	if err != nil {
		return err
	}
	return startControllers(ctx, loopback, root, opts, teams)
}
