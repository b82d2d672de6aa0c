package workloadreport

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/works"
)

// Bounds keep a report well within the size of one object whatever the
// placement's size: objects beyond maxObjects, per-cluster entries beyond
// maxClusterEntries and mirrored statuses beyond maxMirroredBytes are left
// out, and the Reported condition says so.
const (
	maxObjects        = 1000
	maxClusterEntries = 2000
	maxMirroredBytes  = 256 << 10
	// summarized is how many objects the summary line names.
	summarized = 3
)

// clusterWorks are the Works of the placement on one cluster.
type clusterWorks struct {
	cluster string
	works   []placementv1beta1.Work
}

// reported tells whether the member reported on the Work's current spec.
func reported(w *placementv1beta1.Work) bool {
	for _, t := range []string{placementv1beta1.WorkConditionTypeApplied, placementv1beta1.WorkConditionTypeDiffReported} {
		if c := meta.FindStatusCondition(w.Status.Conditions, t); c != nil && c.ObservedGeneration == w.Generation {
			return true
		}
	}
	return false
}

// mirrorsToWorkAPI tells whether the Work's placement mirrors statuses to
// the Work API: the report then carries them to the team.
func mirrorsToWorkAPI(w *placementv1beta1.Work) bool {
	return w.Spec.ReportBackStrategy.MirrorDestination() == placementv1beta1.ReportBackDestinationWorkAPI
}

// build is the report of the placement's objects on its clusters; prev are
// the report's current conditions, whose transition times are kept.
func build(p placementv1beta1.PlacementObj, clusters []clusterWorks, prev []metav1.Condition) placementv1beta1.WorkloadReportStatus {
	sort.Slice(clusters, func(i, j int) bool { return clusters[i].cluster < clusters[j].cluster })
	objects := map[string]*placementv1beta1.ObjectWorkloadReport{}
	var pending []string
	allAvailable := 0
	var budget budget
	for _, cw := range clusters {
		available, complete := true, true
		for i := range cw.works {
			w := &cw.works[i]
			if !reported(w) {
				complete = false
			}
			mirror := mirrorsToWorkAPI(w)
			for _, mc := range w.Status.ManifestConditions {
				id := works.Identifier(w, mc.Identifier)
				o := objects[keyOf(id)]
				if o == nil {
					o = &placementv1beta1.ObjectWorkloadReport{ResourceIdentifier: id}
					objects[keyOf(id)] = o
				}
				if !add(o, cw.cluster, mc, mirror, &budget) {
					available = false
				}
			}
		}
		if !complete {
			pending = append(pending, cw.cluster)
			available = false
		}
		if available {
			allAvailable++
		}
	}
	st := placementv1beta1.WorkloadReportStatus{ObjectCount: int32(len(objects)), Conditions: append([]metav1.Condition(nil), prev...)}
	if len(clusters) > 0 {
		st.AvailableClusters = fmt.Sprintf("%d/%d", allAvailable, len(clusters))
	}
	st.Objects = sorted(objects)
	var ready, wanted int32
	workloads := false
	for i := range st.Objects {
		o := &st.Objects[i]
		o.Summary = objectSummary(o)
		if o.Replicas != nil {
			workloads = true
			wanted += *o.Replicas
			ready += ptr.Deref(o.ReadyReplicas, 0)
		}
	}
	if workloads {
		st.ReadyReplicas = fmt.Sprintf("%d/%d", ready, wanted)
	}
	st.Summary = summary(st.Objects, len(clusters))
	if len(st.Objects) > maxObjects {
		st.Objects = st.Objects[:maxObjects]
		budget.trimmed = true
	}
	setReported(&st, p.GetGeneration(), pending, budget.trimmed)
	return st
}

// budget counts what the report holds across objects.
type budget struct {
	entries, mirrored int
	trimmed           bool
}

// add counts the object on one cluster and tells whether it is available
// there.
func add(o *placementv1beta1.ObjectWorkloadReport, cluster string, mc placementv1beta1.ManifestCondition, mirror bool, b *budget) bool {
	o.PlacedClusters++
	state := placementv1beta1.ClusterWorkloadState{ClusterName: cluster, Available: metav1.ConditionUnknown, Workload: mc.Workload, Warnings: mc.Warnings}
	if c := availability(mc); c != nil {
		state.Available = c.Status
		if c.Status != metav1.ConditionTrue {
			state.Reason = c.Reason
		}
	}
	if state.Available == metav1.ConditionTrue {
		o.AvailableClusters++
	}
	if w := mc.Workload; w != nil && w.Replicas != nil {
		o.Replicas = ptr.To(ptr.Deref(o.Replicas, 0) + *w.Replicas)
		o.ReadyReplicas = ptr.To(ptr.Deref(o.ReadyReplicas, 0) + ptr.Deref(w.ReadyReplicas, 0))
	}
	if mirror && mc.BackReportedStatus != nil {
		if size := len(mc.BackReportedStatus.ObservedStatus.Raw); b.mirrored+size <= maxMirroredBytes {
			b.mirrored += size
			state.BackReportedStatus = mc.BackReportedStatus
		} else {
			b.trimmed = true
		}
	}
	if state.Workload != nil || state.Available != metav1.ConditionTrue || state.BackReportedStatus != nil || len(state.Warnings) > 0 {
		if b.entries < maxClusterEntries {
			b.entries++
			o.Clusters = append(o.Clusters, state)
		} else {
			b.trimmed = true
		}
	}
	return state.Available == metav1.ConditionTrue
}

// availability is the manifest's Available condition, or, when it was not
// applied, its Applied condition (why not).
func availability(mc placementv1beta1.ManifestCondition) *metav1.Condition {
	if c := meta.FindStatusCondition(mc.Conditions, placementv1beta1.WorkConditionTypeApplied); c != nil && c.Status != metav1.ConditionTrue {
		return c
	}
	return meta.FindStatusCondition(mc.Conditions, placementv1beta1.WorkConditionTypeAvailable)
}

func setReported(st *placementv1beta1.WorkloadReportStatus, gen int64, pending []string, trimmed bool) {
	c := metav1.Condition{Type: placementv1beta1.WorkloadReportReportedConditionType, Status: metav1.ConditionTrue, ObservedGeneration: gen,
		Reason: placementv1beta1.WorkloadReportAllReportedReason, Message: "every cluster reported on the placement's current objects"}
	switch {
	case len(pending) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, placementv1beta1.WorkloadReportPendingReason
		c.Message = fmt.Sprintf("%d cluster(s) have not reported on the placement's current objects yet: %s", len(pending), names(pending, 5))
	case trimmed:
		c.Reason = placementv1beta1.WorkloadReportTrimmedReason
		c.Message = fmt.Sprintf("every cluster reported; the report lists at most %d objects and %d per-cluster entries, and mirrors at most %d KiB of statuses: "+
			"kubectl fleet status shows the placement's per-cluster outcome", maxObjects, maxClusterEntries, maxMirroredBytes>>10)
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

func names(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}

// objectSummary is, e.g., "3/3 clusters available, 27/30 replicas ready".
func objectSummary(o *placementv1beta1.ObjectWorkloadReport) string {
	s := fmt.Sprintf("%d/%d clusters available", o.AvailableClusters, o.PlacedClusters)
	if o.Replicas != nil {
		s += fmt.Sprintf(", %d/%d replicas ready", ptr.Deref(o.ReadyReplicas, 0), *o.Replicas)
	}
	return s
}

// summary names the objects not available everywhere, or says all are.
func summary(objects []placementv1beta1.ObjectWorkloadReport, clusters int) string {
	var lagging []string
	for _, o := range objects {
		if o.AvailableClusters < o.PlacedClusters {
			lagging = append(lagging, fmt.Sprintf("%s %s: %s", o.Kind, o.Name, o.Summary))
		}
	}
	switch {
	case len(objects) == 0:
		return "no object reported yet"
	case len(lagging) == 0:
		return fmt.Sprintf("all %d objects available on %d clusters", len(objects), clusters)
	case len(lagging) > summarized:
		return fmt.Sprintf("%s; and %d more objects not available everywhere", strings.Join(lagging[:summarized], "; "), len(lagging)-summarized)
	}
	return strings.Join(lagging, "; ")
}

func keyOf(id placementv1beta1.ResourceIdentifier) string {
	k := strings.Join([]string{id.Group, id.Version, id.Kind, id.Namespace, id.Name}, "/")
	if e := id.Envelope; e != nil {
		k += "@" + string(e.Type) + "/" + e.Namespace + "/" + e.Name
	}
	return k
}

func sorted(objects map[string]*placementv1beta1.ObjectWorkloadReport) []placementv1beta1.ObjectWorkloadReport {
	out := make([]placementv1beta1.ObjectWorkloadReport, 0, len(objects))
	for _, k := range slices.Sorted(maps.Keys(objects)) {
		out = append(out, *objects[k])
	}
	return out
}
