// Package status implements `kubectl fleet status PLACEMENT`: one line per
// cluster the scheduler considered, with what it picked and how far the
// rollout got there.
package status

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
)

// NewCommand returns `kubectl fleet status PLACEMENT`.
func NewCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "status PLACEMENT [-n NAMESPACE]",
		Short: "Show a placement's state on each cluster",
		Long: `Prints the placement's conditions and a table with one row per cluster the
scheduler considered: picked or why not, the resource snapshot index the
cluster serves, whether it is applied and available, and how many of its
objects drifted, conflict with another owner, or failed. Then, from the
placement's workload report, how each placed object runs: on how many
clusters it is available and how many replicas are ready, then its state
on each cluster that says more (replicas, Job counts, load-balancer
addresses, phase, conditions that are not True). Without -n it shows
the ClusterResourcePlacement of the current workspace; with -n, the
ResourcePlacement of that namespace.`,
		Example: `  kubectl fleet status web
  kubectl fleet status web-config -n web`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := hub.Current(flags)
			if err != nil {
				return err
			}
			if err := ws.RequirePlacementAPI(); err != nil {
				return err
			}
			ns := ""
			if flags.Namespace != nil {
				ns = *flags.Namespace
			}
			return show(cmd.Context(), ws, ns, args[0], streams.Out)
		},
	}
}

func show(ctx context.Context, ws *hub.Workspace, ns, name string, out io.Writer) error {
	var p placementv1beta1.PlacementObj = &placementv1beta1.ClusterResourcePlacement{}
	var snaps client.ObjectList = &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if ns != "" {
		p, snaps = &placementv1beta1.ResourcePlacement{}, &placementv1beta1.SchedulingPolicySnapshotList{}
	}
	p.SetNamespace(ns)
	kind := placementv1beta1.PlacementKindOf(p)
	if err := ws.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		return fmt.Errorf("getting %s %s in workspace %s: %w", kind, qualified(ns, name), ws.Path, err)
	}
	if err := ws.List(ctx, snaps, client.InNamespace(ns), client.MatchingLabels{
		placementv1beta1.PlacementTrackingLabel: name, placementv1beta1.IsLatestSnapshotLabel: "true"}); err != nil {
		return err
	}
	var decisions []placementv1beta1.ClusterDecision
	_ = meta.EachListItem(snaps, func(o runtime.Object) error {
		decisions = o.(placementv1beta1.PolicySnapshotObj).GetPolicySnapshotStatus().ClusterDecisions
		return nil
	})
	st := p.GetPlacementStatus()
	fmt.Fprintf(out, "%s %s in %s: latest resource snapshot %s\n", kind, qualified(ns, name), ws.Path, orDash(st.ObservedResourceIndex))
	for _, c := range st.Conditions {
		fmt.Fprintf(out, "  %-40s %-7s %s\n", strings.TrimPrefix(c.Type, kind), c.Status, c.Reason)
	}
	fmt.Fprintln(out)
	if err := table(out, rows(st, decisions)); err != nil {
		return err
	}
	return showWorkloads(ctx, ws, ns, name, out)
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// row is one cluster.
type row struct {
	cluster, picked, snapshot, applied, available string
	drifted, conflicts, failed                    int
}

// rows lists the picked clusters from the placement's status, then the
// clusters the scheduler did not pick with its reason.
func rows(st *placementv1beta1.PlacementStatus, decisions []placementv1beta1.ClusterDecision) []row {
	var out []row
	picked := map[string]bool{}
	for _, s := range st.PerClusterPlacementStatuses {
		if s.ClusterName == "" {
			out = append(out, row{cluster: "-", picked: "no cluster for this slot", snapshot: "-", applied: "-", available: "-"})
			continue
		}
		picked[s.ClusterName] = true
		r := row{cluster: s.ClusterName, picked: "yes", snapshot: orDash(s.ObservedResourceIndex),
			applied: conditionStatus(s.Conditions, string(placementv1beta1.PerClusterAppliedConditionType)), available: conditionStatus(s.Conditions, string(placementv1beta1.PerClusterAvailableConditionType)),
			drifted: len(s.DriftedPlacements), failed: len(s.FailedPlacements)}
		for _, f := range s.FailedPlacements {
			if reason := f.Condition.Reason; reason == placementv1beta1.ApplyResultFailedToTakeOver || reason == placementv1beta1.ApplyResultNotTakenOver {
				r.conflicts++
			}
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].cluster < out[j].cluster })
	var rejected []row
	for _, d := range decisions {
		if d.Selected || picked[d.ClusterName] {
			continue
		}
		rejected = append(rejected, row{cluster: d.ClusterName, picked: "no: " + d.Reason, snapshot: "-", applied: "-", available: "-"})
	}
	sort.Slice(rejected, func(i, j int) bool { return rejected[i].cluster < rejected[j].cluster })
	return append(out, rejected...)
}

func table(out io.Writer, rows []row) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tSNAPSHOT\tAPPLIED\tAVAILABLE\tDRIFTED\tCONFLICTS\tFAILED\tPICKED")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.cluster, r.snapshot, r.applied, r.available,
			count(r.drifted), count(r.conflicts), count(r.failed), r.picked)
	}
	return w.Flush()
}

func count(n int) string { return strconv.Itoa(n) }

func conditionStatus(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
