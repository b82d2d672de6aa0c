package team

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
)

func newUsageCommand(flags *genericclioptions.ConfigFlags, out io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "usage [NAME]",
		Short: "Show what a team keeps on the hub against its limits",
		Long: `Shows the objects, storage, placements and overrides a team keeps on the
hub, all its workspaces together, against the limits the platform set (the
ClusterGrants naming it in root:fleet, or the hub's defaults), as the hub
last counted them (it brings them up to date every 15 seconds). Without
NAME, the team of the current workspace: a team can read its own.`,
		Example: `  kubectl fleet team usage            # in a team workspace
  kubectl fleet team usage payments   # root:teams:payments`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := usageWorkspace(flags, args)
			if err != nil {
				return err
			}
			u, err := readUsage(cmd.Context(), ws)
			if err != nil {
				return err
			}
			return printUsage(out, u)
		},
	}
}

func usageWorkspace(flags *genericclioptions.ConfigFlags, args []string) (*hub.Workspace, error) {
	if len(args) == 1 {
		return hub.At(flags, tenancyv1alpha1.TeamsWorkspace.Join(args[0]))
	}
	return hub.Current(flags)
}

func readUsage(ctx context.Context, ws *hub.Workspace) (*tenancyv1alpha1.TeamUsage, error) {
	lc := &corev1alpha1.LogicalCluster{}
	if err := ws.Get(ctx, client.ObjectKey{Name: corev1alpha1.LogicalClusterName}, lc); err != nil {
		return nil, fmt.Errorf("reading workspace %s: %w", ws.Path, err)
	}
	raw, ok := lc.Annotations[tenancyv1alpha1.UsageAnnotation]
	if !ok {
		return nil, fmt.Errorf("workspace %s shows no usage: it is not a team workspace (below "+tenancyv1alpha1.TeamsWorkspace.String()+"), or the hub has not counted it yet (it does every 15 seconds)", ws.Path)
	}
	u := &tenancyv1alpha1.TeamUsage{}
	if err := json.Unmarshal([]byte(raw), u); err != nil {
		return nil, fmt.Errorf("workspace %s: annotation %s: %w", ws.Path, tenancyv1alpha1.UsageAnnotation, err)
	}
	return u, nil
}

func printUsage(out io.Writer, u *tenancyv1alpha1.TeamUsage) error {
	from := "the hub's defaults (no ClusterGrant sets them)"
	if len(u.Grants) > 0 {
		from = "ClusterGrant " + strings.Join(u.Grants, ", ") + " in " + tenancyv1alpha1.FleetWorkspace.String()
	}
	fmt.Fprintf(out, "team %s, limits from %s\n", u.Team, from)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WHAT\tUSED\tLIMIT\t%")
	bytes := func(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }
	count := func(n int64) string { return fmt.Sprint(n) }
	for _, row := range []struct {
		name        string
		used, limit int64
		format      func(int64) string
	}{
		{"objects", u.Used.Objects, u.Limits.Objects, count},
		{"storage", u.Used.StorageBytes, u.Limits.StorageBytes, bytes},
		{"placements", u.Used.Placements, u.Limits.Placements, count},
		{"overrides", u.Used.Overrides, u.Limits.Overrides, count},
	} {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", row.name, row.format(row.used), row.format(row.limit), percent(row.used, row.limit))
	}
	fmt.Fprintf(w, "snapshots kept\t-\t%d\tper placement (revisionHistoryLimit)\n", u.Limits.SnapshotsKept)
	return w.Flush()
}

func percent(used, limit int64) string {
	if limit <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", used*100/limit)
}
