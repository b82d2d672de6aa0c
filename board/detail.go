package board

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// PlacementDetail is a placement's page.
type PlacementDetail struct {
	PlacementSummary
	ResourceIndex string             `json:"resourceIndex,omitempty"`
	Conditions    []Condition        `json:"conditions"`
	Clusters      []ClusterPlacement `json:"clusters"`
	Runs          []UpdateRun        `json:"runs"`
	Workloads     *WorkloadSummary   `json:"workloads,omitempty"`
	Events        []Event            `json:"events"`
}

// Condition is a condition as the page lists it.
type Condition struct {
	Type    string      `json:"type"`
	Status  string      `json:"status"`
	Reason  string      `json:"reason"`
	Message string      `json:"message,omitempty"`
	Time    metav1.Time `json:"time"`
}

// ClusterPlacement is one cluster the scheduler considered: picked or why
// not, and how far the rollout got there.
type ClusterPlacement struct {
	Name       string      `json:"name"`
	Picked     bool        `json:"picked"`
	Decision   string      `json:"decision,omitempty"`
	Score      string      `json:"score,omitempty"`
	Cell       *Cell       `json:"cell,omitempty"`
	Snapshot   string      `json:"snapshot,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
	Overrides  []string    `json:"overrides,omitempty"`
	Failed     []string    `json:"failed,omitempty"`
	Drifted    []string    `json:"drifted,omitempty"`
	Diffed     []string    `json:"diffed,omitempty"`
	Workloads  []string    `json:"workloads,omitempty"`
}

// UpdateRun is a staged update run of the placement, stage by stage.
type UpdateRun struct {
	Name       string      `json:"name"`
	Namespace  string      `json:"namespace,omitempty"`
	Conditions []Condition `json:"conditions"`
	Stages     []Stage     `json:"stages"`
}

// Stage is a stage of a run: its clusters and its approvals.
type Stage struct {
	Name      string         `json:"name"`
	State     string         `json:"state"`
	Clusters  []StageCluster `json:"clusters"`
	Approvals []Approval     `json:"approvals,omitempty"`
}

// StageCluster is a cluster of a stage.
type StageCluster struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// Approval is an approval request of a stage; the caller may approve it
// when it waits and the hub lets the caller update its status.
type Approval struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	When       string `json:"when"`
	Approved   bool   `json:"approved"`
	Created    bool   `json:"created"`
	CanApprove bool   `json:"canApprove"`
}

// WorkloadSummary is the placement's workload report.
type WorkloadSummary struct {
	Summary string `json:"summary"`
}

func (w *workspaceWatch) placement(ctx context.Context, namespace, name string, mayApprove func(ctx context.Context, kind, namespace string) bool) (*PlacementDetail, error) {
	var p placementv1beta1.PlacementObj = &placementv1beta1.ClusterResourcePlacement{}
	if namespace != "" {
		p = &placementv1beta1.ResourcePlacement{}
	}
	if !w.sees(p) {
		return nil, errNotFound(fmt.Sprintf("workspace %s does not serve %ss to you", w.path, placementv1beta1.PlacementKindOf(p)))
	}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, p); err != nil {
		return nil, notFoundOr(err, fmt.Sprintf("%s %s not found in workspace %s", placementv1beta1.PlacementKindOf(p), qualified(namespace, name), w.path))
	}
	kind := placementv1beta1.PlacementKindOf(p)
	d := &PlacementDetail{PlacementSummary: summarize(p), ResourceIndex: p.GetPlacementStatus().ObservedResourceIndex,
		Conditions: conditions(p.GetPlacementStatus().Conditions)}
	decisions, err := w.decisions(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	d.Clusters = clusterPlacements(p.GetPlacementStatus(), decisions)
	if err := w.addWorkloads(ctx, d, namespace, name); err != nil {
		return nil, err
	}
	if d.Runs, err = w.updateRuns(ctx, namespace, name, mayApprove); err != nil {
		return nil, err
	}
	d.Events, err = w.events(ctx, func(ref corev1.ObjectReference) bool {
		return ref.Kind == kind && ref.Namespace == namespace && ref.Name == name
	})
	return d, err
}

func conditions(conds []metav1.Condition) []Condition {
	out := make([]Condition, 0, len(conds))
	for _, c := range conds {
		out = append(out, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, Time: c.LastTransitionTime})
	}
	return out
}

// decisions are the scheduler's decisions in the placement's latest policy
// snapshot.
func (w *workspaceWatch) decisions(ctx context.Context, namespace, name string) ([]placementv1beta1.ClusterDecision, error) {
	var obj client.Object = &placementv1beta1.ClusterSchedulingPolicySnapshot{}
	var list client.ObjectList = &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	if namespace != "" {
		obj, list = &placementv1beta1.SchedulingPolicySnapshot{}, &placementv1beta1.SchedulingPolicySnapshotList{}
	}
	if err := w.list(ctx, obj, list, client.InNamespace(namespace), client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: name}); err != nil {
		return nil, err
	}
	var out []placementv1beta1.ClusterDecision
	err := meta.EachListItem(list, func(o runtime.Object) error {
		out = o.(placementv1beta1.PolicySnapshotObj).GetPolicySnapshotStatus().ClusterDecisions
		return nil
	})
	return out, err
}

// clusterPlacements lists the picked clusters with their state, then
// those the scheduler turned down, with its reason.
func clusterPlacements(st *placementv1beta1.PlacementStatus, decisions []placementv1beta1.ClusterDecision) []ClusterPlacement {
	byName := map[string]placementv1beta1.ClusterDecision{}
	for _, d := range decisions {
		byName[d.ClusterName] = d
	}
	var out []ClusterPlacement
	seen := map[string]bool{}
	for _, c := range st.PerClusterPlacementStatuses {
		if c.ClusterName == "" {
			continue
		}
		seen[c.ClusterName] = true
		cell := cellOf(c.Conditions, len(c.FailedPlacements), len(c.DriftedPlacements), len(c.DiffedPlacements))
		cp := ClusterPlacement{Name: c.ClusterName, Picked: true, Cell: &cell, Snapshot: c.ObservedResourceIndex,
			Conditions: conditions(c.Conditions), Overrides: c.ApplicableClusterResourceOverrides}
		cp.Decision, cp.Score = decisionOf(byName[c.ClusterName])
		for _, o := range c.ApplicableResourceOverrides {
			cp.Overrides = append(cp.Overrides, qualified(o.Namespace, o.Name))
		}
		for _, f := range c.FailedPlacements {
			cp.Failed = append(cp.Failed, failureLine(f))
		}
		for _, d := range c.DriftedPlacements {
			cp.Drifted = append(cp.Drifted, fmt.Sprintf("%s: %d fields", d.Describe(), len(d.ObservedDrifts)))
		}
		for _, d := range c.DiffedPlacements {
			cp.Diffed = append(cp.Diffed, fmt.Sprintf("%s: %d fields", d.Describe(), len(d.ObservedDiffs)))
		}
		out = append(out, cp)
	}
	var rejected []ClusterPlacement
	for _, d := range decisions {
		if seen[d.ClusterName] {
			continue
		}
		cp := ClusterPlacement{Name: d.ClusterName, Picked: d.Selected}
		cp.Decision, cp.Score = decisionOf(d)
		rejected = append(rejected, cp)
	}
	sort.Slice(rejected, func(i, j int) bool { return rejected[i].Name < rejected[j].Name })
	return append(out, rejected...)
}

func decisionOf(d placementv1beta1.ClusterDecision) (string, string) {
	if d.ClusterScore == nil {
		return d.Reason, ""
	}
	var affinity, spread int32
	if d.ClusterScore.AffinityScore != nil {
		affinity = *d.ClusterScore.AffinityScore
	}
	if d.ClusterScore.TopologySpreadScore != nil {
		spread = *d.ClusterScore.TopologySpreadScore
	}
	return d.Reason, fmt.Sprintf("affinity %d, topology spread %d", affinity, spread)
}

// addWorkloads adds the placement's workload report, per cluster where a
// cluster says more than that it is available.
func (w *workspaceWatch) addWorkloads(ctx context.Context, d *PlacementDetail, namespace, name string) error {
	var report placementv1beta1.WorkloadReportObj = &placementv1beta1.ClusterWorkloadReport{}
	if namespace != "" {
		report = &placementv1beta1.WorkloadReport{}
	}
	if !w.sees(report) {
		return nil
	}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, report); err != nil {
		return client.IgnoreNotFound(err)
	}
	st := report.GetWorkloadReportStatus()
	d.Workloads = &WorkloadSummary{Summary: st.Summary}
	byCluster := map[string]int{}
	for i, c := range d.Clusters {
		byCluster[c.Name] = i
	}
	for _, o := range st.Objects {
		for _, c := range o.Clusters {
			i, ok := byCluster[c.ClusterName]
			if !ok {
				continue
			}
			line := fmt.Sprintf("%s: %s", o.Describe(), c.Available)
			if c.Workload != nil && c.Workload.Replicas != nil {
				ready := int32(0)
				if c.Workload.ReadyReplicas != nil {
					ready = *c.Workload.ReadyReplicas
				}
				line += fmt.Sprintf(", %d/%d ready", ready, *c.Workload.Replicas)
			}
			d.Clusters[i].Workloads = append(d.Clusters[i].Workloads, line)
		}
	}
	return nil
}
