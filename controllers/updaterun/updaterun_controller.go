// Package updaterun executes staged update runs: for a placement whose
// rollout strategy is External, a ClusterStagedUpdateRun (or, for a
// ResourcePlacement, a StagedUpdateRun) rolls one resource snapshot out stage
// by stage, as its strategy describes. Initialization freezes the strategy,
// the scheduled clusters and their order into the run's status; execution
// binds the clusters of each stage (maxConcurrency at a time), waits for them
// to be available, runs the after-stage tasks (timed waits, approvals), and
// finally removes the placement from the clusters no longer scheduled. A
// change the plan cannot absorb (a new scheduling policy, another cluster
// count, another apply strategy) fails the run; a new run takes over.
package updaterun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/predicates"
	"github.com/fleetplane/fleetplane/controllers/rollout"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// ControllerName names the controllers in logs.
const ControllerName = "fleet-updaterun"

// Reconciler executes one kind of update run.
type Reconciler struct {
	Manager    mcmanager.Manager
	Workspaces *clients.Factory
	// Fleet reads MemberClusters in root:fleet: stages select clusters by
	// their labels.
	Fleet client.Reader
	placements.Scope

	// written holds the binding writes the cache does not show yet.
	written placements.UnseenWrites[string]
}

func (r *Reconciler) kinds() kinds { return kinds{namespaced: r.Namespaced} }

// SetupWithManager registers the controller. Besides its runs, it follows
// what a run waits for or must notice: the placement, its bindings and
// policy snapshots, the run's approval requests, and strategies a run has
// not found yet.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	k, sample := r.kinds(), r.Sample()
	return mcbuilder.ControllerManagedBy(mgr).
		Named(r.Name(ControllerName)).
		For(k.newRun(), mcbuilder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicates.DeletionStarted{}))).
		Watches(k.newApprovalRequest(), r.toRuns(func(o client.Object, run placementv1beta1.UpdateRunObj) bool {
			return o.GetLabels()[placementv1beta1.TargetUpdateRunLabel] == run.GetName()
		})).
		Watches(sample.New(), r.toRuns(func(o client.Object, run placementv1beta1.UpdateRunObj) bool {
			return run.GetUpdateRunSpec().PlacementName == o.GetName()
		})).
		Watches(sample.NewBinding(), r.toRuns(ofPlacement)).
		Watches(sample.NewPolicySnapshot(), r.toRuns(ofPlacement)).
		Watches(k.newStrategy(), r.toRuns(func(o client.Object, run placementv1beta1.UpdateRunObj) bool {
			return run.GetUpdateRunSpec().StagedUpdateStrategyName == o.GetName() && !initialized(run)
		})).
		Complete(metrics.Reconciler[mcreconcile.Request](r.Name(ControllerName), r))
}

func ofPlacement(o client.Object, run placementv1beta1.UpdateRunObj) bool {
	return run.GetUpdateRunSpec().PlacementName == o.GetLabels()[placementv1beta1.PlacementTrackingLabel]
}

// toRuns maps an object to the runs of its workspace (and namespace) that
// concern it. A workspace holds few runs; the list is of the cache.
func (r *Reconciler) toRuns(concerns func(client.Object, placementv1beta1.UpdateRunObj) bool) mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(clusterName string, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []mcreconcile.Request {
			list := r.kinds().newRunList()
			var opts []client.ListOption
			if r.Namespaced {
				opts = append(opts, client.InNamespace(o.GetNamespace()))
			}
			if err := cl.GetCache().List(ctx, list, opts...); err != nil {
				log.FromContext(ctx).Error(err, "listing the update runs a change concerns; they are not woken by it", "workspace", clusterName, "object", client.ObjectKeyFromObject(o))
				return nil
			}
			var out []mcreconcile.Request
			for _, run := range r.kinds().runsOf(list) {
				if concerns(o, run) && !finished(run) {
					out = append(out, mcreconcile.Request{ClusterName: clusterName, Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(run)}})
				}
			}
			return out
		})
	}
}

// Reconcile initializes, checks and advances one run.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := placements.WorkspaceClient(ctx, r.Manager, r.Workspaces, req.ClusterName)
	if err != nil {
		if placements.IgnoreWorkspaceGone(err) == nil {
			r.written.Forget(req.String())
		}
		return ctrl.Result{}, placements.IgnoreWorkspaceGone(err)
	}
	run := r.kinds().newRun()
	if err := c.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.Forget(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !run.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.cleanUp(ctx, c, run)
	}
	if controllerutil.AddFinalizer(run, placementv1beta1.UpdateRunFinalizer) {
		if err := c.Update(ctx, run); err != nil {
			return placements.RetryConflict(err)
		}
	}
	if finished(run) {
		return ctrl.Result{}, nil
	}
	before := run.GetUpdateRunStatus().DeepCopy()
	result, err := r.step(ctx, c, run, req.String())
	if err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(before, run.GetUpdateRunStatus()) {
		if err := c.Status().Update(ctx, run); err != nil {
			return placements.RetryConflict(err)
		}
	}
	return result, nil
}

// step moves the run on, writing its status into run.
func (r *Reconciler) step(ctx context.Context, c client.Client, run placementv1beta1.UpdateRunObj, key string) (ctrl.Result, error) {
	st := run.GetUpdateRunStatus()
	if !initialized(run) {
		next, err := r.initialize(ctx, c, run)
		var fail *failure
		switch {
		case errors.As(err, &fail):
			r.initFailed(run, fail)
			return ctrl.Result{}, nil
		case err != nil:
			return ctrl.Result{}, err
		}
		next.Conditions = st.Conditions
		*st = next
		setRun(run, placementv1beta1.StagedUpdateRunConditionInitialized, metav1.ConditionTrue, placementv1beta1.UpdateRunInitializeSucceededReason,
			fmt.Sprintf("%s initialized successfully", r.kinds().runKind()))
	}
	state := run.GetUpdateRunSpec().State
	if state == placementv1beta1.UpdateRunStateInitialize || state == "" {
		setRun(run, placementv1beta1.StagedUpdateRunConditionProgressing, metav1.ConditionFalse, placementv1beta1.UpdateRunNotStartedReason,
			fmt.Sprintf("The %s is initialized; set spec.state to Run to start it", r.kinds().runKind()))
		return ctrl.Result{}, nil
	}
	w, err := r.observe(ctx, c, run)
	var fail *failure
	switch {
	case errors.As(err, &fail):
		r.runFailed(run, fail)
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	// A cache that does not show this run's last binding writes would
	// have it bind again, or count a cluster done on its old spec. The
	// writes' own events bring the run back.
	if r.written.Wait(key, w.listed) > 0 {
		return ctrl.Result{RequeueAfter: placements.ConflictRetry}, nil
	}
	out := advance(st, w)
	if out.displaced != "" {
		r.runFailed(run, &failure{msg: fmt.Sprintf("the binding of cluster %s was changed by another update run after this run updated it", out.displaced)})
		return ctrl.Result{}, nil
	}
	if err := r.apply(ctx, c, run, w, out, key); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: out.requeue}, nil
}

// failure is what stops a run for good (or, at initialization, until what
// it waits for appears), with the message the run reports.
type failure struct {
	msg string
	// wait marks an initialization failure that clears itself: the
	// placement or strategy does not exist yet.
	wait bool
}

func (f *failure) Error() string { return f.msg }

func fail(format string, args ...any) error { return &failure{msg: fmt.Sprintf(format, args...)} }

func waitFor(format string, args ...any) error {
	return &failure{msg: fmt.Sprintf(format, args...), wait: true}
}

func (r *Reconciler) initFailed(run placementv1beta1.UpdateRunObj, f *failure) {
	setRun(run, placementv1beta1.StagedUpdateRunConditionInitialized, metav1.ConditionFalse, placementv1beta1.UpdateRunInitializeFailedReason, f.msg)
	if !f.wait {
		setRun(run, placementv1beta1.StagedUpdateRunConditionSucceeded, metav1.ConditionFalse, placementv1beta1.UpdateRunFailedReason, f.msg)
	}
}

// runFailed ends a run: the run, and the stage it was in, are failed.
func (r *Reconciler) runFailed(run placementv1beta1.UpdateRunObj, f *failure) {
	msg := f.msg + "; the run stops here, create a new update run to continue the rollout"
	setRun(run, placementv1beta1.StagedUpdateRunConditionProgressing, metav1.ConditionFalse, placementv1beta1.UpdateRunFailedReason, msg)
	setRun(run, placementv1beta1.StagedUpdateRunConditionSucceeded, metav1.ConditionFalse, placementv1beta1.UpdateRunFailedReason, msg)
	st := run.GetUpdateRunStatus()
	for i := range st.StagesStatus {
		s := &st.StagesStatus[i]
		if s.StartTime != nil && !isTrue(s.Conditions, placementv1beta1.StageUpdatingConditionSucceeded) {
			w := world{now: time.Now(), generation: run.GetGeneration()}
			set(&s.Conditions, placementv1beta1.StageUpdatingConditionProgressing, metav1.ConditionFalse, placementv1beta1.StageUpdatingFailedReason, f.msg, w)
			set(&s.Conditions, placementv1beta1.StageUpdatingConditionSucceeded, metav1.ConditionFalse, placementv1beta1.StageUpdatingFailedReason, f.msg, w)
		}
	}
}

func setRun(run placementv1beta1.UpdateRunObj, t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&run.GetUpdateRunStatus().Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: run.GetGeneration()})
}

func initialized(run placementv1beta1.UpdateRunObj) bool {
	return isTrue(run.GetUpdateRunStatus().Conditions, placementv1beta1.StagedUpdateRunConditionInitialized)
}

// finished tells whether the run has succeeded or failed: nothing moves it
// any more.
func finished(run placementv1beta1.UpdateRunObj) bool {
	return meta.FindStatusCondition(run.GetUpdateRunStatus().Conditions, placementv1beta1.StagedUpdateRunConditionSucceeded) != nil
}

// apply makes the writes of one step: approval requests first (a stage
// waits on them), then bindings.
func (r *Reconciler) apply(ctx context.Context, c client.Client, run placementv1beta1.UpdateRunObj, w world, out steps, key string) error {
	for _, a := range out.request {
		if err := r.requestApproval(ctx, c, run, a); err != nil {
			return err
		}
	}
	for _, name := range out.accept {
		if err := r.acceptApproval(ctx, c, run.GetNamespace(), name); err != nil {
			return err
		}
	}
	st := run.GetUpdateRunStatus()
	for _, cl := range out.bind {
		b := w.bindings[cl.ClusterName]
		if b == nil || b.GetBindingSpec().State == placementv1beta1.BindingStateUnscheduled {
			// The cluster is leaving the placement; the next check fails the run.
			continue
		}
		from := b.GetResourceVersion()
		annotations := b.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[placementv1beta1.UpdateRunAnnotation] = r.kinds().runKind() + "/" + run.GetName()
		b.SetAnnotations(annotations)
		if err := rollout.Bind(ctx, c, b, w.snapshot, applicable(cl), st.ApplyStrategy); err != nil {
			return err
		}
		r.written.Updated(key, b, from)
	}
	for _, name := range out.remove {
		b := w.bindings[name]
		if err := client.IgnoreNotFound(c.Delete(ctx, b, client.Preconditions{UID: ptr.To(b.GetUID())})); err != nil {
			return fmt.Errorf("removing the placement from %s: %w", name, err)
		}
	}
	return nil
}
