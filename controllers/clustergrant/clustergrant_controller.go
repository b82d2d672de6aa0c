// Package clustergrant keeps each ClusterGrant's status showing the member
// clusters it currently covers, so admins can check a grant before a team
// relies on it.
package clustergrant

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/metrics"
)

// ControllerName names the controller in logs.
const ControllerName = "fleet-clustergrant"

// maxListed caps the cluster names shown in a grant's status.
const maxListed = 1000

// Reconciler reconciles ClusterGrants in root:fleet.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager registers the controller; member clusters joining,
// leaving or changing labels update every grant.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&tenancyv1alpha1.ClusterGrant{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.allGrants), builder.WithPredicates(labelsOrMembership{})).
		Complete(metrics.Reconciler[reconcile.Request](ControllerName, r))
}

func (r *Reconciler) allGrants(ctx context.Context, mc client.Object) []reconcile.Request {
	list := &tenancyv1alpha1.ClusterGrantList{}
	if err := r.Client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "listing the ClusterGrants to count a changed member cluster in; their counts wait for their next change", "memberCluster", mc.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, g := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: g.Name}})
	}
	return out
}

// labelsOrMembership passes member clusters appearing, going and relabelled.
type labelsOrMembership struct{ predicate.Funcs }

func (labelsOrMembership) Update(e event.UpdateEvent) bool {
	return !equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
}

// Reconcile counts the clusters a grant covers.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &tenancyv1alpha1.ClusterGrant{}
	if err := r.Client.Get(ctx, req.NamespacedName, g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	st := g.Status.DeepCopy()
	valid := metav1.Condition{Type: tenancyv1alpha1.ClusterGrantConditionValid, Status: metav1.ConditionTrue, Reason: tenancyv1alpha1.ClusterGrantSelectorValid, ObservedGeneration: g.Generation,
		Message: "the grant's cluster selector is valid"}
	sel := labels.Everything()
	var err error
	if g.Spec.ClusterSelector != nil {
		sel, err = metav1.LabelSelectorAsSelector(g.Spec.ClusterSelector)
	}
	if err != nil {
		valid.Status, valid.Reason, valid.Message = metav1.ConditionFalse, tenancyv1alpha1.ClusterGrantSelectorInvalid, "clusterSelector: "+err.Error()
		st.ClusterCount, st.Clusters = 0, nil
	} else {
		// Only names are read: no copies of the cache's objects. Every
		// member joining relabels itself once (its name label), and a
		// copied list per join was a thousand copies per join at 1,000
		// members.
		members := &clusterv1beta1.MemberClusterList{}
		if err := r.Client.List(ctx, members, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, err
		}
		names := make([]string, 0, len(members.Items))
		for _, m := range members.Items {
			names = append(names, m.Name)
		}
		sort.Strings(names)
		st.ClusterCount = int32(len(names))
		st.Clusters = names[:min(len(names), maxListed)]
	}
	meta.SetStatusCondition(&st.Conditions, valid)
	if equality.Semantic.DeepEqual(*st, g.Status) {
		return ctrl.Result{}, nil
	}
	g.Status = *st
	return ctrl.Result{}, r.Client.Status().Update(ctx, g)
}
