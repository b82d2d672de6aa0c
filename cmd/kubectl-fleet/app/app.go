// Package app assembles the kubectl-fleet command tree.
package app

import (
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
	cmd := &cobra.Command{
		Use:          "kubectl fleet",
		Short:        "Work with a Fleetplane hub: workspaces, teams, member clusters and rollouts",
		SilenceUsage: true,
	}
	flags.AddFlags(cmd.PersistentFlags())
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
