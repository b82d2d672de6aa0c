// Package clustergrant keeps each ClusterGrant's status showing the member
// clusters it currently covers, so admins can check a grant before a team
// relies on it.
package clustergrant

import (
	"context"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// statusInterval is the least time between two status writes of one
// grant. While members join by the hundred, a grant that covers them all
// is written once a second rather than once per member: each write carries
// the names of up to 1,000 clusters, and a write per member was a second,
// larger write for every MemberCluster created.
const statusInterval = time.Second

// Reconciler reconciles ClusterGrants in root:fleet.
type Reconciler struct {
	Client client.Client
	// Now tells the time (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	written map[string]time.Time
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
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Before counting: counting lists every member the grant covers.
	if wait := r.wait(req.Name); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
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
	// Without the resourceVersion: this controller alone writes the status,
	// and a cache a write behind would otherwise make it conflict.
	patch := client.MergeFrom(g.DeepCopy())
	g.Status = *st
	if err := r.Client.Status().Patch(ctx, g, patch); err != nil {
		return ctrl.Result{}, err
	}
	r.wrote(req.Name)
	return ctrl.Result{}, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// wait is how long the grant's next status write must wait.
func (r *Reconciler) wait(name string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.written[name]
	if !ok {
		return 0
	}
	return max(0, statusInterval-r.now().Sub(last))
}

func (r *Reconciler) wrote(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[string]time.Time{}
	}
	r.written[name] = r.now()
}

func (r *Reconciler) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.written, name)
}
