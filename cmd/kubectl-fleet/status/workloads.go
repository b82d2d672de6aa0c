package status

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
)

// showWorkloads prints the placement's workload report.
func showWorkloads(ctx context.Context, ws *hub.Workspace, ns, name string, out io.Writer) error {
	var report placementv1beta1.WorkloadReportObj = &placementv1beta1.ClusterWorkloadReport{}
	kind := "ClusterWorkloadReport"
	if ns != "" {
		report, kind = &placementv1beta1.WorkloadReport{}, "WorkloadReport"
	}
	err := ws.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, report)
	if apierrors.IsNotFound(err) {
		fmt.Fprintf(out, "\nNo %s %s yet: the hub writes it once a cluster reports on the placement's objects.\n", kind, qualified(ns, name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting %s %s in workspace %s: %w", kind, qualified(ns, name), ws.Path, err)
	}
	st := report.GetWorkloadReportStatus()
	fmt.Fprintf(out, "\nWorkloads (%s %s): %s\n", kind, qualified(ns, name), st.Summary)
	for _, c := range st.Conditions {
		if c.Status != "True" || c.Reason == placementv1beta1.WorkloadReportTrimmedReason {
			fmt.Fprintf(out, "  %s %s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return workloadTable(out, st.Objects)
}

// workloadTable has a row per object, summed over its clusters, and a row
// per cluster that says more than that the object is available there.
func workloadTable(out io.Writer, objects []placementv1beta1.ObjectWorkloadReport) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OBJECT\tCLUSTER\tAVAILABLE\tREADY\tDETAILS")
	for _, o := range objects {
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t\n", o.Describe(), "(all)", o.AvailableClusters, o.PlacedClusters, ready(o.ReadyReplicas, o.Replicas))
		for _, c := range o.Clusters {
			var replicas, readyReplicas *int32
			if c.Workload != nil {
				replicas, readyReplicas = c.Workload.Replicas, c.Workload.ReadyReplicas
			}
			fmt.Fprintf(w, "\t%s\t%s\t%s\t%s\n", c.ClusterName, c.Available, ready(readyReplicas, replicas), details(c))
		}
	}
	return w.Flush()
}

func ready(readyReplicas, replicas *int32) string {
	if replicas == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", ptr.Deref(readyReplicas, 0), *replicas)
}

// details says what else the member reported: why the object is not
// available, Job counts, addresses, phase, and its conditions that are
// not True.
func details(c placementv1beta1.ClusterWorkloadState) string {
	var parts []string
	if c.Reason != "" {
		parts = append(parts, c.Reason)
	}
	if s := c.Workload; s != nil {
		if s.UpdatedReplicas != nil && s.Replicas != nil && *s.UpdatedReplicas != *s.Replicas {
			parts = append(parts, fmt.Sprintf("%d updated", *s.UpdatedReplicas))
		}
		if s.Active != nil || s.Succeeded != nil || s.Failed != nil {
			parts = append(parts, fmt.Sprintf("active %d, succeeded %d, failed %d", ptr.Deref(s.Active, 0), ptr.Deref(s.Succeeded, 0), ptr.Deref(s.Failed, 0)))
		}
		if len(s.LoadBalancerIngress) > 0 {
			parts = append(parts, "ingress "+strings.Join(s.LoadBalancerIngress, ","))
		}
		if s.Phase != "" {
			parts = append(parts, "phase "+s.Phase)
		}
		for _, cond := range s.Conditions {
			if cond.Status != "True" {
				parts = append(parts, fmt.Sprintf("%s=%s %s", cond.Type, cond.Status, cond.Reason))
			}
		}
	}
	for _, w := range c.Warnings {
		parts = append(parts, fmt.Sprintf("warning %s: %s", w.Reason, w.Message))
	}
	if c.BackReportedStatus != nil {
		parts = append(parts, "status mirrored (see -o yaml of the report)")
	}
	return strings.Join(parts, "; ")
}
