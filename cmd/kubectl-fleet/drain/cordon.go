// Package drain implements `kubectl fleet cordon`, `uncordon` and `drain`:
// keeping new placements off a member cluster with a NoSchedule taint, and
// evicting the placements it holds within their disruption budgets.
package drain

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
)

// cordonTaint keeps the scheduler from picking a cluster; what is placed
// there stays.
var cordonTaint = clusterv1beta1.Taint{Key: clusterv1beta1.CordonTaintKey, Value: clusterv1beta1.CordonTaintValue, Effect: "NoSchedule"}

// NewCordonCommand returns `kubectl fleet cordon NAME`.
func NewCordonCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var name *hub.NameFlag
	cmd := &cobra.Command{
		Use:   "cordon MEMBER",
		Short: "Keep new placements off a member cluster",
		Long: `Adds the taint cordon-key=cordon-value:NoSchedule to the MemberCluster in
root:fleet: the scheduler picks the cluster for no new placement (unless a
placement tolerates the taint), and what is already placed there stays.
Run it with hub admin credentials, from any workspace.`,
		Example: `  kubectl fleet cordon member-1`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			member, err := name.Name(args)
			if err != nil {
				return err
			}
			changed, err := setCordon(cmd.Context(), flags, member, true)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "member cluster %s %s\n", member, pick(changed, "cordoned", "already cordoned"))
			return nil
		},
	}
	name = hub.AddNameFlag(cmd, "cluster-name", "the member cluster")
	return cmd
}

// NewUncordonCommand returns `kubectl fleet uncordon NAME`, also
// `uncordoncluster --cluster-name NAME` as KubeFleet spells it.
func NewUncordonCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var name *hub.NameFlag
	cmd := &cobra.Command{
		Use:     "uncordon MEMBER",
		Aliases: []string{"uncordoncluster"},
		Short:   "Let placements use a cordoned member cluster again",
		Long: `Removes the cordon taint from the MemberCluster in root:fleet; placements
that select the cluster (PickAll ones at once) are scheduled onto it again.`,
		Example: `  kubectl fleet uncordon member-1

  # KubeFleet's form
  kubectl fleet uncordoncluster --hub-cluster-context hub --cluster-name member-1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			member, err := name.Name(args)
			if err != nil {
				return err
			}
			changed, err := setCordon(cmd.Context(), flags, member, false)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "member cluster %s %s\n", member, pick(changed, "uncordoned", "was not cordoned"))
			return nil
		},
	}
	name = hub.AddNameFlag(cmd, "cluster-name", "the member cluster")
	return cmd
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// setCordon adds or removes the cordon taint and tells whether it changed
// anything.
func setCordon(ctx context.Context, flags *genericclioptions.ConfigFlags, name string, cordon bool) (bool, error) {
	fleet, err := hub.At(flags, tenancyv1alpha1.FleetWorkspace)
	if err != nil {
		return false, err
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := fleet.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return false, fmt.Errorf("getting member cluster %s in %s: %w", name, tenancyv1alpha1.FleetWorkspace, err)
	}
	i := slices.IndexFunc(mc.Spec.Taints, func(t clusterv1beta1.Taint) bool { return t == cordonTaint })
	switch {
	case cordon && i >= 0, !cordon && i < 0:
		return false, nil
	case cordon:
		mc.Spec.Taints = append(mc.Spec.Taints, cordonTaint)
	default:
		mc.Spec.Taints = slices.Delete(mc.Spec.Taints, i, i+1)
	}
	if err := fleet.Update(ctx, mc); err != nil {
		return false, fmt.Errorf("updating member cluster %s: %w", name, err)
	}
	return true, nil
}
