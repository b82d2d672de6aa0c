// Package approve implements `kubectl fleet approve`: approving a staged
// update run's approval request.
package approve

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
	"github.com/fleetplane/fleetplane/internal/approval"
)

// NewCommand returns `kubectl fleet approve KIND NAME`.
func NewCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var message string
	var name *hub.NameFlag
	cmd := &cobra.Command{
		Use:   "approve (clusterapprovalrequest|careq|approvalrequest|areq) NAME [--message TEXT]",
		Short: "Approve a stage of a staged update run",
		Long: `Sets the Approved condition of an approval request, which a staged update
run creates for each Approval task (named <run>-before-<stage> or
<run>-after-<stage>); the run then goes on. ClusterApprovalRequests gate
ClusterStagedUpdateRuns; namespaced ApprovalRequests gate StagedUpdateRuns.`,
		Example: `  # Approve the canary stage of the ClusterStagedUpdateRun example-run
  kubectl fleet approve clusterapprovalrequest example-run-after-canary

  # Approve a namespaced run's stage, with a note
  kubectl fleet approve approvalrequest web-run-before-prod -n web --message "canary metrics look good"

  # KubeFleet's form
  kubectl fleet approve careq --hub-cluster-context hub --name example-run-after-canary`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := approval.NewRequest(args[0])
			if err != nil {
				return err
			}
			reqName, err := name.Name(args[1:])
			if err != nil {
				return err
			}
			ws, err := hub.Current(flags)
			if err != nil {
				return err
			}
			if err := ws.RequirePlacementAPI(); err != nil {
				return err
			}
			ns := ""
			if _, namespaced := req.(*placementv1beta1.ApprovalRequest); namespaced {
				if ns, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
					return err
				}
			}
			if err := ws.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: reqName}, req); err != nil {
				return fmt.Errorf("getting %s %s in workspace %s: %w", args[0], reqName, ws.Path, err)
			}
			if err := approval.Approve(cmd.Context(), ws, req, message); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "%s %s approved: update run %s goes on past stage %s\n", args[0], reqName,
				req.GetApprovalRequestSpec().TargetUpdateRun, req.GetApprovalRequestSpec().TargetStage)
			return nil
		},
	}
	name = hub.AddNameFlag(cmd, "name", "the approval request")
	cmd.Flags().StringVar(&message, "message", "approved with kubectl fleet approve", "why the stage is approved, recorded in the condition")
	return cmd
}
