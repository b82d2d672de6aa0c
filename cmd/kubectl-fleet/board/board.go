// Package board implements `kubectl fleet board`: the fleet board served
// on this machine with the kubeconfig's credentials.
package board

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/fleetplane/fleetplane/board"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
	"github.com/fleetplane/fleetplane/internal/huburl"
)

// NewCommand returns `kubectl fleet board`.
func NewCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "board [--address 127.0.0.1:8090]",
		Short: "Show the fleet in a browser: clusters, placements, rollouts and events, live",
		Long: `Serves the fleet board on this machine and prints a link that signs you in
once. The board acts with the kubeconfig's credentials: it shows the
workspace of the current context (a team sees its own; a platform admin
in root:fleet may switch to the teams' workspaces) and approves stages
as you. The credentials stay in this process; the browser gets a session
cookie. Others may sign in on the same board with a token of their own.
The board serves plain HTTP, so it listens on a loopback address only.`,
		Example: `  kubectl ws :root:teams:team-a
  kubectl fleet board
  kubectl fleet board --address 127.0.0.1:0    # any free port`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := hub.Current(flags)
			if err != nil {
				return err
			}
			ln, err := board.ListenLoopback(address)
			if err != nil {
				return err
			}
			base := rest.CopyConfig(ws.Config)
			base.Host = huburl.Base(base.Host)
			srv := board.New(base)
			link, user, err := srv.Link(cmd.Context(), ws.Path, base)
			if err != nil {
				ln.Close()
				return err
			}
			fmt.Fprintf(streams.Out, "Fleet board of workspace %s as %s:\n\n  http://%s%s\n\nThe link signs one browser in, once. Ctrl-C stops the board.\n", ws.Path, user, ln.Addr(), link)
			return srv.Serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().StringVar(&address, "address", "127.0.0.1:8090", "loopback address and port to serve the board on (port 0 picks a free one)")
	return cmd
}
