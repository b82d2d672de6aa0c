package workloadreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/works"
)

// mirrorsToOriginal tells whether the placement mirrors member statuses to
// its original objects.
func mirrorsToOriginal(p placementv1beta1.PlacementObj) bool {
	return p.GetPlacementSpec().Strategy.ReportBackStrategy.MirrorDestination() == placementv1beta1.ReportBackDestinationOriginalResource
}

// singleCluster tells why a placement cannot mirror to its original
// objects: only one that targets exactly one cluster can.
func singleCluster(p placementv1beta1.PlacementObj) (string, bool) {
	pol := p.GetPlacementSpec().Policy
	switch {
	case pol == nil || pol.PlacementType == placementv1beta1.PickAllPlacementType:
		return "it picks all clusters (PickAll)", false
	case pol.PlacementType == placementv1beta1.PickFixedPlacementType && len(pol.ClusterNames) != 1:
		return fmt.Sprintf("it names %d clusters (PickFixed)", len(pol.ClusterNames)), false
	case pol.PlacementType == placementv1beta1.PickNPlacementType && (pol.NumberOfClusters == nil || *pol.NumberOfClusters != 1):
		return "its numberOfClusters is not 1 (PickN)", false
	}
	return "", true
}

// mirror copies, for a placement that asks for it, each member object's
// status onto the object of the same kind, namespace and name in the
// placement's workspace (its status only: a status update leaves the spec
// as it is), and records the outcome in the report's StatusBackReported
// condition. Enveloped objects have no original to copy to.
func (r *Reconciler) mirror(ctx context.Context, workspace string, p placementv1beta1.PlacementObj, clusters []clusterWorks, st *placementv1beta1.WorkloadReportStatus) error {
	c := metav1.Condition{Type: placementv1beta1.WorkloadReportStatusBackReportedConditionType, ObservedGeneration: p.GetGeneration()}
	set := func(status metav1.ConditionStatus, reason, msg string) {
		c.Status, c.Reason, c.Message = status, reason, msg
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if why, ok := singleCluster(p); !ok {
		set(metav1.ConditionFalse, placementv1beta1.StatusBackReportNotSingleClusterReason,
			fmt.Sprintf("reportBackStrategy Mirror to OriginalResource needs a placement that targets exactly one cluster (PickFixed with one cluster name, or PickN with numberOfClusters 1), and %s: "+
				"use destination WorkAPI to read each cluster's status in this report", why))
		return nil
	}
	if len(clusters) != 1 {
		meta.RemoveStatusCondition(&st.Conditions, c.Type)
		return nil
	}
	ws, err := r.Workspaces.For(logicalcluster.Name(workspace))
	if err != nil {
		return err
	}
	// Only what the placement selected: a Work's report names the objects,
	// and the hub writes nothing else of the workspace on its say.
	selected := map[string]bool{}
	for _, id := range p.GetPlacementStatus().SelectedResources {
		if id.Envelope == nil {
			selected[keyOf(id)] = true
		}
	}
	var mirrored int
	var tooLarge, failed []string
	var errs []error
	for i := range clusters[0].works {
		w := &clusters[0].works[i]
		if !reported(w) {
			continue
		}
		for _, mc := range w.Status.ManifestConditions {
			if !selected[keyOf(works.Identifier(w, mc.Identifier))] {
				continue
			}
			name := describe(mc.Identifier)
			if cond := meta.FindStatusCondition(mc.Conditions, placementv1beta1.WorkloadReportStatusBackReportedConditionType); cond != nil && cond.Status == metav1.ConditionFalse {
				tooLarge = append(tooLarge, name)
				continue
			}
			if mc.BackReportedStatus == nil {
				continue
			}
			switch err := mirrorOne(ctx, ws.Client, mc.Identifier, mc.BackReportedStatus.ObservedStatus.Raw); {
			case err == nil:
				mirrored++
			case apierrors.IsConflict(err):
				errs = append(errs, err)
			default:
				failed = append(failed, fmt.Sprintf("%s: %v", name, err))
			}
		}
	}
	switch {
	case len(failed) > 0:
		set(metav1.ConditionFalse, placementv1beta1.StatusBackReportFailedReason, fmt.Sprintf("the status of %s could not be written", names(failed, 3)))
	case len(tooLarge) > 0:
		set(metav1.ConditionFalse, placementv1beta1.StatusBackReportTooLargeReason, fmt.Sprintf("the status of %s on cluster %s is larger than %d KiB and is not mirrored",
			names(tooLarge, 3), clusters[0].cluster, placementv1beta1.MaxBackReportedStatusBytes>>10))
	default:
		set(metav1.ConditionTrue, placementv1beta1.StatusBackReportedReason, fmt.Sprintf("the statuses on cluster %s are mirrored to the placed objects (%d with a status)", clusters[0].cluster, mirrored))
	}
	if len(errs) > 0 {
		log.FromContext(ctx).V(1).Info("mirroring a status met a concurrent write; retrying", "placement", placements.KeyOf(p))
	}
	return errors.Join(errs...)
}

// mirrorOne writes raw ({"status": ...}) as the status of the workspace's
// object id names, unless it says that already. An object that is gone
// (no longer selected) is left alone.
func mirrorOne(ctx context.Context, c client.Client, id placementv1beta1.WorkResourceIdentifier, raw []byte) error {
	var reported map[string]any
	if err := json.Unmarshal(raw, &reported); err != nil {
		return fmt.Errorf("the reported status is not JSON: %w", err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind})
	if err := c.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if equality.Semantic.DeepEqual(obj.Object["status"], reported["status"]) {
		return nil
	}
	obj.Object["status"] = reported["status"]
	return c.Status().Update(ctx, obj)
}

func describe(id placementv1beta1.WorkResourceIdentifier) string {
	if id.Namespace == "" {
		return id.Kind + " " + id.Name
	}
	return fmt.Sprintf("%s %s/%s", id.Kind, id.Namespace, id.Name)
}
