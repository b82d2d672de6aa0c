package scheduler

import (
	"context"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

// allPlacements enqueues every placement of this kind in every workspace:
// a change of the fleet can make any of them schedule differently.
func (r *Reconciler) allPlacements() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(string, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcreconcile.Request {
			var list placementv1beta1.PlacementListObj = &placementv1beta1.ClusterResourcePlacementList{}
			if r.Namespaced {
				list = &placementv1beta1.ResourcePlacementList{}
			}
			if err := placements.ListEverywhere(ctx, r.Manager, list); err != nil {
				log.FromContext(ctx).Error(err, "listing placements after a fleet change; they are rescheduled on their next change")
				return nil
			}
			var out []mcreconcile.Request
			for _, p := range list.GetPlacementObjs() {
				out = append(out, placements.RequestFor(p))
			}
			return out
		})
	}
}

// latestSnapshot passes new policy snapshots and changes of their labels or
// annotations (the PickN count); the scheduler's own status writes do not.
type latestSnapshot struct{ predicate.Funcs }

func (latestSnapshot) Update(e event.UpdateEvent) bool {
	return !equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
		!equality.Semantic.DeepEqual(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
}

func (latestSnapshot) Delete(event.DeleteEvent) bool { return false }

// bindingEvents passes deleted bindings, which the scheduler may have to
// replace, and the last created binding a placement waits to see (see
// Reconciler.created). Updates are the scheduler's and the rollout's own.
type bindingEvents struct {
	predicate.Funcs
	created *placements.UnseenWrites[workspacePlacement]
}

func (p bindingEvents) Create(e event.CreateEvent) bool {
	k := placements.Key{Namespace: e.Object.GetNamespace(), Name: e.Object.GetLabels()[placementv1beta1.PlacementTrackingLabel]}
	return p.created.CreationSeen(workspacePlacement{logicalcluster.From(e.Object).String(), k}, e.Object.GetName())
}

func (bindingEvents) Update(event.UpdateEvent) bool { return false }

// schedulingRelevant passes member cluster changes that can change a
// decision: labels, taints, deletion, membership and health, properties and
// namespaces. Heartbeats and resource usage alone do not.
type schedulingRelevant struct{ predicate.Funcs }

func (schedulingRelevant) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*clusterv1beta1.MemberCluster)
	n, ok2 := e.ObjectNew.(*clusterv1beta1.MemberCluster)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		!equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
		o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() ||
		conditionStatus(o, clusterv1beta1.ConditionTypeMemberClusterJoined) != conditionStatus(n, clusterv1beta1.ConditionTypeMemberClusterJoined) ||
		conditionStatus(o, clusterv1beta1.ConditionTypeMemberClusterHealthy) != conditionStatus(n, clusterv1beta1.ConditionTypeMemberClusterHealthy) ||
		!sameKeys(o.Status.Namespaces, n.Status.Namespaces) ||
		!samePropertyValues(o.Status.Properties, n.Status.Properties)
}

func conditionStatus(mc *clusterv1beta1.MemberCluster, t string) string {
	if c := meta.FindStatusCondition(mc.Status.Conditions, t); c != nil {
		return string(c.Status)
	}
	return ""
}

func sameKeys(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func samePropertyValues(a, b map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k].Value != v.Value {
			return false
		}
	}
	return true
}
