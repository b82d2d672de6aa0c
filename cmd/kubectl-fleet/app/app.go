// Package app assembles the kubectl-fleet command tree.
package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/approve"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/board"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/drain"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/join"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/status"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/team"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/ws"
)

// NewCommand returns the root `kubectl fleet` command.
func NewCommand() *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	var hubContext string
	cmd := &cobra.Command{
		Use:          "fleet",
		Annotations:  map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl fleet"},
		Short:        "Work with a Fleetplane hub: workspaces, teams, member clusters and rollouts",
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return useHubContext(flags, hubContext)
		},
	}
	flags.AddFlags(cmd.PersistentFlags())
	// Known before cobra looks for the subcommand: otherwise it takes
	// --help for a flag with a value, and in "--help --kubeconfig FILE"
	// FILE for a command.
	cmd.InitDefaultHelpFlag()
	cmd.PersistentFlags().StringVar(&hubContext, "hub-cluster-context", "", "the kubeconfig context of the hub, as KubeFleet's kubectl-fleet names it: the same as --context")
	cmd.AddCommand(
		ws.NewCommand(flags, streams),
		join.NewJoinCommand(flags, streams),
		join.NewUnjoinCommand(flags, streams),
		approve.NewCommand(flags, streams),
		board.NewCommand(flags, streams),
		drain.NewCordonCommand(flags, streams),
		drain.NewUncordonCommand(flags, streams),
		drain.NewDrainCommand(flags, streams),
		status.NewCommand(flags, streams),
		team.NewCommand(flags, streams),
	)
	return cmd
}

// useHubContext makes --hub-cluster-context the kubeconfig context the
// commands use; with --context as well, both must name the same one.
func useHubContext(flags *genericclioptions.ConfigFlags, hubContext string) error {
	if hubContext == "" {
		return nil
	}
	if *flags.Context != "" && *flags.Context != hubContext {
		return fmt.Errorf("--context %q and --hub-cluster-context %q name different contexts; give one", *flags.Context, hubContext)
	}
	*flags.Context = hubContext
	return nil
}
