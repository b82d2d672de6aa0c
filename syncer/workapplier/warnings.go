package workapplier

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/syncer/workload"
)

// WarningsControllerName names the controller that follows the member's
// Warning events.
const WarningsControllerName = "fleet-member-warnings"

const (
	// warningTTL is how long a warning is reported after the member last
	// repeated it.
	warningTTL = 10 * time.Minute
	// maxWarnings is how many warnings, by reason, an object reports.
	maxWarnings = 3
	// maxWarningMessage bounds a warning's message.
	maxWarningMessage = 512
	// maxOwnerHops is how far up its owners an event's object is followed
	// to a placed object: a Pod, its ReplicaSet, their Deployment.
	maxOwnerHops = 3
)

// systemNamespaces hold no team's objects: their events are not followed.
var systemNamespaces = map[string]bool{"kube-system": true, "kube-public": true, "kube-node-lease": true}

// memberWarnings remembers, per placed object, the member's latest Warning
// event of each reason; the Works report them with the object.
type memberWarnings struct {
	mu       sync.Mutex
	byObject map[objectKey]map[string]seenWarning
}

type seenWarning struct {
	placementv1beta1.MemberWarning
	last time.Time
}

// record notes a warning about obj seen at last, and tells whether what
// the object reports changed.
func (w *memberWarnings) record(obj objectKey, warning placementv1beta1.MemberWarning, last time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byObject == nil {
		w.byObject = map[objectKey]map[string]seenWarning{}
	}
	reasons := w.byObject[obj]
	if reasons == nil {
		reasons = map[string]seenWarning{}
		w.byObject[obj] = reasons
	}
	prev, ok := reasons[warning.Reason]
	if ok && !last.After(prev.last) {
		return false
	}
	// The object first named keeps being named: another pod repeating
	// the same warning changes nothing worth a status write.
	if ok && prev.Message == warning.Message {
		warning.Object = prev.Object
	}
	reasons[warning.Reason] = seenWarning{MemberWarning: warning, last: last}
	return !ok || prev.MemberWarning != warning
}

// expire forgets the warnings of obj not repeated since warningTTL before
// now, and tells whether any was.
func (w *memberWarnings) expire(obj objectKey, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	expired := false
	for reason, sw := range w.byObject[obj] {
		if now.Sub(sw.last) > warningTTL {
			delete(w.byObject[obj], reason)
			expired = true
		}
	}
	if len(w.byObject[obj]) == 0 {
		delete(w.byObject, obj)
	}
	return expired
}

// of returns the object's current warnings, by reason.
func (w *memberWarnings) of(obj objectKey) []placementv1beta1.MemberWarning {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []placementv1beta1.MemberWarning
	for _, sw := range w.byObject[obj] {
		out = append(out, sw.MemberWarning)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out[:min(len(out), maxWarnings)]
}

// warningsReconciler follows the member's Warning events to the placed
// objects they are about (through the objects' owners: a pod's warning is
// its Deployment's) and has their Works report them.
type warningsReconciler struct {
	applier *Reconciler
	// works receives the Works to report again.
	works chan event.GenericEvent
	now   func() time.Time
}

// setupWarnings runs the warnings controller on the member's Warning
// events and has the work applier watch the Works it hands on.
func (r *Reconciler) setupWarnings(mgr ctrl.Manager, works chan event.GenericEvent) error {
	w := &warningsReconciler{applier: r, works: works, now: time.Now}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.named(WarningsControllerName)).
		WatchesRawSource(source.Kind(r.Member.GetCache(), &corev1.Event{}, &handler.TypedEnqueueRequestForObject[*corev1.Event]{},
			predicate.NewTypedPredicateFuncs(func(e *corev1.Event) bool {
				return e.Type == corev1.EventTypeWarning && !systemNamespaces[e.InvolvedObject.Namespace]
			}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(metrics.Reconciler[ctrl.Request](r.named(WarningsControllerName), w))
}

// Reconcile records one Warning event against the placed object it is
// about, or forgets it once it is old; either way the object's Works
// report again when what it reports changed.
func (w *warningsReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ev := &corev1.Event{}
	if err := w.applier.Member.GetCache().Get(ctx, req.NamespacedName, ev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	placed, key, err := w.placedOwner(ctx, ev.InvolvedObject)
	if err != nil || placed == nil {
		return ctrl.Result{}, err
	}
	last := lastSeen(ev)
	changed := false
	if w.now().Sub(last) <= warningTTL {
		changed = w.applier.warnings.record(key, placementv1beta1.MemberWarning{Reason: ev.Reason, Message: workload.Cut(ev.Message, maxWarningMessage),
			Object: ev.InvolvedObject.Kind + " " + ev.InvolvedObject.Name}, last)
	}
	changed = w.applier.warnings.expire(key, w.now()) || changed
	if changed {
		for _, r := range w.applier.tracker.toWork(ctx, placed) {
			work := &placementv1beta1.Work{}
			work.Namespace, work.Name = r.Namespace, r.Name
			w.works <- event.GenericEvent{Object: work}
		}
	}
	// Looked at again once it would expire, unless repeated before.
	return ctrl.Result{RequeueAfter: max(time.Second, warningTTL-w.now().Sub(last)+time.Second)}, nil
}

// placedOwner is the placed object ref is, or runs under (ref itself or
// one of its controlling owners), and its key; nil when there is none.
// Only metadata is read, from the member's API server: the objects a pod
// runs under are not in the syncer's cache unless placed.
func (w *warningsReconciler) placedOwner(ctx context.Context, ref corev1.ObjectReference) (client.Object, objectKey, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	for range maxOwnerHops {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		err := w.applier.Member.GetAPIReader().Get(ctx, key, obj)
		if apierrors.IsNotFound(err) || isNoKindMatch(err) {
			return nil, objectKey{}, nil
		}
		if err != nil {
			return nil, objectKey{}, err
		}
		if placed(obj) {
			return obj, objectKey{gvk.Group, gvk.Kind, key.Namespace, key.Name}, nil
		}
		owner := metav1.GetControllerOf(obj)
		if owner == nil {
			return nil, objectKey{}, nil
		}
		gvk = schema.FromAPIVersionAndKind(owner.APIVersion, owner.Kind)
		key.Name = owner.Name
	}
	return nil, objectKey{}, nil
}

// lastSeen is when the member last recorded the event.
func lastSeen(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}
