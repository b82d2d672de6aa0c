// Package workapplier applies the Work of the syncer's member cluster: it
// watches Work in the member's namespace on the hub, applies the manifests to
// the member cluster (client-side or server-side), records what it applied in
// an AppliedWork on the member, tracks availability and reports per-manifest
// and Work-level status back to the hub.
package workapplier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/metrics"
)

// ControllerName names this controller in logs and events.
const ControllerName = "fleet-work-applier"

// warnedBuffer is how many Works the warnings controller may hand on
// before it waits for the work applier to take them.
const warnedBuffer = 1024

// Reconciler applies the Works of one home of Work: the hub workspace the
// syncer joined (root:fleet), or, on a hub of several shards, a shard's
// works workspace. Hub is the client of the home (cached, scoped to the
// member's namespace) and HubReader reads its API server directly; Member
// is the member cluster.
type Reconciler struct {
	Hub        client.Client
	HubReader  client.Reader
	Member     cluster.Cluster
	MemberName string
	Namespace  string
	// Home names the home: empty for the hub workspace the syncer joined,
	// the shard's name for a shard's works workspace. It tells the
	// appliers' controllers apart.
	Home string
	// Membership reads the member's InternalMemberCluster in the hub
	// workspace the syncer joined (cached); nil reads it from Hub.
	Membership client.Reader
	// Kinds is shared by the member's appliers, one per home; nil gives
	// this one its own.
	Kinds *Kinds

	tracker   *tracker
	waiting   waiting
	deletions deletions
	warnings  memberWarnings
}

// SetupWithManager registers the applier of the Works in the hub workspace
// of mgr, the one the syncer joined.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.SetupWithHome(mgr, mgr, mgr.GetCache())
}

// SetupWithHome registers, on mgr, the applier of the Works in home; it
// follows the member's InternalMemberCluster in membership (the cache of
// the hub workspace the syncer joined). Member-side changes of applied
// objects reach it through watches the tracker adds as kinds are first
// applied.
func (r *Reconciler) SetupWithHome(mgr ctrl.Manager, home cluster.Cluster, membership cache.Cache) error {
	if r.Kinds == nil {
		r.Kinds = NewKinds()
	}
	warned := make(chan event.GenericEvent, warnedBuffer)
	works := func(h handler.TypedEventHandler[*placementv1beta1.Work, reconcile.Request], p ...predicate.TypedPredicate[*placementv1beta1.Work]) source.TypedSource[reconcile.Request] {
		return source.Kind(home.GetCache(), &placementv1beta1.Work{}, h, p...)
	}
	generationChanged := predicate.TypedGenerationChangedPredicate[*placementv1beta1.Work]{}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named(r.named(ControllerName)).
		// Our own status writes must not trigger another round.
		WatchesRawSource(works(&handler.TypedEnqueueRequestForObject[*placementv1beta1.Work]{},
			predicate.Or[*placementv1beta1.Work](generationChanged, deletionStarted{}))).
		// Joining or leaving changes what every Work should do.
		WatchesRawSource(source.Kind(membership, &clusterv1beta1.InternalMemberCluster{},
			handler.TypedEnqueueRequestsFromMapFunc(r.allWorks),
			predicate.TypedGenerationChangedPredicate[*clusterv1beta1.InternalMemberCluster]{})).
		// A Work waiting for its placement's other Works goes on when one
		// of them changes.
		WatchesRawSource(works(handler.TypedEnqueueRequestsFromMapFunc(r.wakeSiblings), generationChanged)).
		// The member's warnings about a Work's objects are reported with
		// its status.
		WatchesRawSource(source.Channel(warned, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 4,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, time.Minute),
		}).
		Build(metrics.Reconciler[reconcile.Request](r.named(ControllerName), r))
	if err != nil {
		return err
	}
	r.tracker = newTracker(r.Kinds, c, r.Member, r.Hub, r.Namespace, r.MemberName)
	if err := r.setupWarnings(mgr, warned); err != nil {
		return err
	}
	// Zero is reported too, so that rates work from the start.
	workApplyErrors.WithLabelValues(r.MemberName)
	return nil
}

// named is a controller's name for this applier's home.
func (r *Reconciler) named(controller string) string {
	if r.Home == "" {
		return controller
	}
	return controller + "-" + r.Home
}

// membership reads the member's InternalMemberCluster.
func (r *Reconciler) membership() client.Reader {
	if r.Membership != nil {
		return r.Membership
	}
	return r.Hub
}

// deletionStarted passes updates that set the deletion timestamp.
type deletionStarted struct {
	predicate.TypedFuncs[*placementv1beta1.Work]
}

func (deletionStarted) Update(e event.TypedUpdateEvent[*placementv1beta1.Work]) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}

func (r *Reconciler) allWorks(ctx context.Context, _ *clusterv1beta1.InternalMemberCluster) []reconcile.Request {
	works := &placementv1beta1.WorkList{}
	if err := r.Hub.List(ctx, works, client.InNamespace(r.Namespace)); err != nil {
		log.FromContext(ctx).Error(err, "listing the Works to apply again after the member's state changed; each is applied again on its next change", "namespace", r.Namespace)
		return nil
	}
	out := make([]reconcile.Request, 0, len(works.Items))
	for _, w := range works.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}})
	}
	return out
}

// Reconcile applies one Work, or cleans up after it when it is deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	work := &placementv1beta1.Work{}
	if err := r.Hub.Get(ctx, req.NamespacedName, work); err != nil {
		// A Work that is simply gone (e.g. the member left and its namespace
		// was removed) leaves everything applied in place.
		if apierrors.IsNotFound(err) {
			r.waiting.remove(req.Name)
			r.deletions.forget(req.Name)
			return ctrl.Result{}, r.tracker.forget(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	joined, err := r.joined(ctx)
	if err != nil || !joined {
		return ctrl.Result{}, err
	}
	// Every decision logged from here names the placement, its workspace
	// and this member (docs/operations.md follows one placement so).
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("workspace", ownerOf(work).path, "placement", placementOf(work), "cluster", r.MemberName))
	if !work.DeletionTimestamp.IsZero() {
		return r.cleanUp(ctx, work)
	}
	if controllerutil.AddFinalizer(work, placementv1beta1.WorkFinalizer) {
		if err := r.Hub.Update(ctx, work); err != nil {
			return ctrl.Result{}, err
		}
	}
	start := time.Now()
	manifests := decode(work)
	err = r.apply(ctx, work, manifests)
	if errors.Is(err, errUnsettled) {
		r.observeApply(start, manifests, nil)
		log.FromContext(ctx).V(1).Info("waiting for the placement's other Works", "reason", err.Error())
		return ctrl.Result{RequeueAfter: unsettledBackstop}, nil
	}
	r.observeApply(start, manifests, err)
	return ctrl.Result{}, err
}

// placementOf names the Work's placement as the hub's logs do: name, or
// namespace/name for a ResourcePlacement.
func placementOf(work *placementv1beta1.Work) string {
	name := work.Labels[placementv1beta1.PlacementTrackingLabel]
	if ns := work.Labels[placementv1beta1.ParentNamespaceLabel]; ns != "" {
		return ns + "/" + name
	}
	return name
}

// apply applies the Work's manifests in waves, records what it applied in
// the AppliedWork and reports the status to the hub.
func (r *Reconciler) apply(ctx context.Context, work *placementv1beta1.Work, manifests []*manifest) error {
	r.tracker.echoes.forget(work.Name)
	aw, err := r.ensureAppliedWork(ctx, work)
	if err != nil {
		r.reportUnapplied(ctx, work, err)
		return err
	}
	if err := r.tracker.use(ctx, work.Name, kindsOf(manifests, aw)); err != nil {
		return err
	}
	o := ownerOf(work)
	a := &applier{member: r.Member.GetClient(), reader: r.reader(), appliedWork: ownerRef(aw), owner: o, strategy: strategyOf(work),
		namespacedEnvelope: namespacedEnvelope(work)}
	for _, wave := range inWaves(manifests) {
		if err := r.applyWave(ctx, a, wave); err != nil {
			return err
		}
	}
	// Stale objects that must wait for the placement's other Works are let
	// go of when one of those changes (waiting); the status is reported
	// meanwhile. Waiting starts before the cache is read, so that no
	// change of another Work slips between the two.
	r.waiting.add(work.Name, o.identity)
	unsettled := r.removeStale(ctx, work, aw, o, manifests)
	if errors.Is(unsettled, errUnsettled) {
		r.waiting.add(work.Name, o.identity)
	} else {
		r.waiting.remove(work.Name)
	}
	if unsettled != nil && !errors.Is(unsettled, errUnsettled) {
		return unsettled
	}
	if err := r.recordApplied(ctx, aw, manifests, unsettled != nil); err != nil {
		return err
	}
	// What was let go of is not watched any more.
	if err := r.tracker.use(ctx, work.Name, kindsOf(manifests, aw)); err != nil {
		return err
	}
	for _, m := range manifests {
		m.warnings = r.warnings.of(keyOf(m.id))
	}
	if err := r.writeStatus(ctx, work, manifests); err != nil {
		return err
	}
	if unsettled != nil {
		return unsettled
	}
	if failed := countFailed(manifests, true); failed > 0 {
		// Retried with backoff: a namespace or CRD may arrive later, a
		// conflict may be resolved.
		return fmt.Errorf("%d of %d manifests of Work %s could not be applied", failed, len(manifests), work.Name)
	}
	return nil
}

// applyParallelism is how many manifests of a wave are applied at once.
const applyParallelism = 8

// applyWave applies the manifests of one wave, which do not depend on each
// other, a few at a time.
func (r *Reconciler) applyWave(ctx context.Context, a *applier, wave []*manifest) error {
	a.startWave()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(applyParallelism)
	for _, m := range wave {
		g.Go(func() error {
			applied := r.tracker.applying(a.appliedWork.Name, m.obj)
			a.apply(gctx, m)
			var written client.Object
			if m.wrote {
				written = m.live
			}
			applied(written)
			if m.live != nil && m.applied.ok {
				if err := r.tracker.track(gctx, m.live.GroupVersionKind()); err != nil {
					return err
				}
			}
			assessAvailability(m)
			return nil
		})
	}
	return g.Wait()
}

func (r *Reconciler) reader() memberReader {
	return memberReader{cache: r.Member.GetCache(), direct: r.Member.GetAPIReader()}
}

// joined tells whether the hub currently wants this member in the fleet.
func (r *Reconciler) joined(ctx context.Context) (bool, error) {
	imc := &clusterv1beta1.InternalMemberCluster{}
	err := r.membership().Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.MemberName}, imc)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && imc.Spec.State == clusterv1beta1.ClusterStateJoin, err
}

// namespacedEnvelope names the ResourceEnvelope whose objects the Work
// carries (the hub labels such a Work), or is empty.
func namespacedEnvelope(work *placementv1beta1.Work) string {
	if work.Labels[placementv1beta1.EnvelopeTypeLabel] != string(placementv1beta1.ResourceEnvelopeType) {
		return ""
	}
	return fmt.Sprintf("ResourceEnvelope %s/%s", work.Labels[placementv1beta1.EnvelopeNamespaceLabel], work.Labels[placementv1beta1.EnvelopeNameLabel])
}

func strategyOf(work *placementv1beta1.Work) placementv1beta1.ApplyStrategy {
	s := placementv1beta1.ApplyStrategy{}
	if work.Spec.ApplyStrategy != nil {
		s = *work.Spec.ApplyStrategy
	}
	if s.Type == "" {
		s.Type = placementv1beta1.ApplyStrategyTypeClientSideApply
	}
	if s.WhenToTakeOver == "" {
		s.WhenToTakeOver = placementv1beta1.WhenToTakeOverTypeAlways
	}
	if s.ComparisonOption == "" {
		s.ComparisonOption = placementv1beta1.ComparisonOptionTypePartialComparison
	}
	return s
}

// countFailed counts the manifests not applied; a drifted one waits for
// the member's change, which its watch reports. retriableOnly leaves out
// those that failed to decode or are duplicates: they fail the same way
// until the Work changes, which starts a new round anyway.
func countFailed(ms []*manifest, retriableOnly bool) int {
	n := 0
	for _, m := range ms {
		if !m.applied.ok && len(m.drifts) == 0 && (m.obj != nil || !retriableOnly) {
			n++
		}
	}
	return n
}

// reportUnapplied marks the Work not applied when the member's API server
// cannot be used at all (it is down, or refuses the syncer), so that the
// placement shows the outage; the manifests keep their last conditions.
func (r *Reconciler) reportUnapplied(ctx context.Context, work *placementv1beta1.Work, cause error) {
	status := *work.Status.DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: placementv1beta1.WorkConditionTypeApplied, Status: metav1.ConditionFalse,
		Reason: placementv1beta1.WorkAppliedFailedReason, ObservedGeneration: work.Generation,
		Message: fmt.Sprintf("the member cluster's API server cannot be used: %v; retrying with backoff", cause)})
	meta.RemoveStatusCondition(&status.Conditions, placementv1beta1.WorkConditionTypeAvailable)
	if equality.Semantic.DeepEqual(status, work.Status) {
		return
	}
	work.Status = status
	if err := r.Hub.Status().Update(ctx, work); err != nil {
		log.FromContext(ctx).Error(err, "reporting that the Work could not be applied")
	}
}

// writeStatus updates the Work's status on the hub when it changed. A
// conflict means the cache had not seen this syncer's previous report yet
// (the objects it just created bring their Work straight back): the report
// is made again over the Work as the hub has it, rather than the whole Work
// applied again after an error's backoff. A Work whose spec changed
// meanwhile is left to the reconcile that change brings.
func (r *Reconciler) writeStatus(ctx context.Context, work *placementv1beta1.Work, ms []*manifest) error {
	key, uid, generation := client.ObjectKeyFromObject(work), work.UID, work.Generation
	err := r.updateStatus(ctx, work, ms)
	if !apierrors.IsConflict(err) {
		return err
	}
	current := &placementv1beta1.Work{}
	if err := r.HubReader.Get(ctx, key, current); err != nil {
		return client.IgnoreNotFound(err)
	}
	if current.UID != uid || current.Generation != generation {
		return nil
	}
	return r.updateStatus(ctx, current, ms)
}

func (r *Reconciler) updateStatus(ctx context.Context, work *placementv1beta1.Work, ms []*manifest) error {
	status := buildStatus(work, ms, metav1.Now())
	if equality.Semantic.DeepEqual(status, work.Status) {
		return nil
	}
	work.Status = status
	return r.Hub.Status().Update(ctx, work)
}
