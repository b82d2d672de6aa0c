package workapplier

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Kinds is what the work appliers of one member share, one applier per
// home of Work (Reconciler.Kinds): the member cache's informers, which a
// kind keeps while a Work of any home uses it, and one lock over the
// appliers' trackers.
type Kinds struct {
	mu       sync.Mutex
	trackers []*tracker
	// informed are the kinds whose informers reads may have started.
	informed sets.Set[schema.GroupVersionKind]
}

// NewKinds returns the Kinds of one member's work appliers.
func NewKinds() *Kinds {
	return &Kinds{informed: sets.New[schema.GroupVersionKind]()}
}

// tracker watches, on the member cluster, the objects the syncer placed
// (the member cache selects the placed label) of the kinds it places, and
// maps their changes back to their Work, so availability is
// re-assessed when it changes instead of by polling. It keeps a watch (and
// the member cache's informer, which reads of the kind start too) only
// while some Work uses the kind: a member that once held a kind does not
// watch it forever. Each work applier has its tracker; they share the
// member cache's informers (Kinds).
type tracker struct {
	kinds     *Kinds
	ctrl      controller.Controller
	member    cluster.Cluster
	hub       client.Reader
	namespace string
	// memberName labels the metrics.
	memberName string

	// uses holds, by Work name, the kinds of its manifests and of what it
	// applied before and has not let go of yet; watched, the kinds this
	// applier's controller watches. Both under kinds.mu.
	uses    map[string]sets.Set[schema.GroupVersionKind]
	watched sets.Set[schema.GroupVersionKind]

	echoes echoes
}

func newTracker(kinds *Kinds, c controller.Controller, member cluster.Cluster, hub client.Reader, namespace, memberName string) *tracker {
	t := &tracker{kinds: kinds, ctrl: c, member: member, hub: hub, namespace: namespace, memberName: memberName,
		uses: map[string]sets.Set[schema.GroupVersionKind]{}, watched: sets.New[schema.GroupVersionKind]()}
	kinds.mu.Lock()
	kinds.trackers = append(kinds.trackers, t)
	kinds.mu.Unlock()
	watchedObjects.add(memberName, kinds)
	return t
}

// use records the kinds a Work uses now, before it reads or applies any of
// them, and stops the informers of kinds no Work uses any more.
func (t *tracker) use(ctx context.Context, work string, kinds sets.Set[schema.GroupVersionKind]) error {
	t.kinds.mu.Lock()
	defer t.kinds.mu.Unlock()
	t.uses[work] = kinds
	t.kinds.informed = t.kinds.informed.Union(kinds)
	return t.releaseUnused(ctx)
}

// forget drops a Work that is gone from the member.
func (t *tracker) forget(ctx context.Context, work string) error {
	t.echoes.forget(work)
	t.kinds.mu.Lock()
	defer t.kinds.mu.Unlock()
	delete(t.uses, work)
	return t.releaseUnused(ctx)
}

// releaseUnused stops the informers of the kinds no Work of any home uses;
// every applier's watch of such a kind ends with its informer.
func (t *tracker) releaseUnused(ctx context.Context) error {
	k := t.kinds
	used := sets.New[schema.GroupVersionKind]()
	for _, other := range k.trackers {
		for _, kinds := range other.uses {
			used = used.Union(kinds)
		}
	}
	for gvk := range k.informed.Difference(used) {
		if err := t.member.GetCache().RemoveInformer(ctx, objectOf(gvk)); err != nil {
			return err
		}
		k.informed.Delete(gvk)
		for _, other := range k.trackers {
			other.watched.Delete(gvk)
		}
	}
	watchedKinds.WithLabelValues(t.memberName).Set(float64(k.watchedKinds().Len()))
	return nil
}

// watchedKinds are the kinds some applier watches; under mu.
func (k *Kinds) watchedKinds() sets.Set[schema.GroupVersionKind] {
	out := sets.New[schema.GroupVersionKind]()
	for _, t := range k.trackers {
		out = out.Union(t.watched)
	}
	return out
}

// track starts this applier's watch of gvk unless one is running. The
// informer is got here, under the lock, so that a release that follows
// stops exactly it.
func (t *tracker) track(ctx context.Context, gvk schema.GroupVersionKind) error {
	t.kinds.mu.Lock()
	defer t.kinds.mu.Unlock()
	if t.watched.Has(gvk) {
		return nil
	}
	informer, err := t.member.GetCache().GetInformer(ctx, objectOf(gvk), cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	if err := t.ctrl.Watch(&source.Informer{Informer: informer, Handler: t.handler()}); err != nil {
		return err
	}
	t.watched.Insert(gvk)
	t.kinds.informed.Insert(gvk)
	watchedKinds.WithLabelValues(t.memberName).Set(float64(t.kinds.watchedKinds().Len()))
	return nil
}

// cached counts the objects the member cache holds of each watched kind.
func (k *Kinds) cached() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	counts := map[string]int{}
	if len(k.trackers) == 0 {
		return counts
	}
	member := k.trackers[0].member
	for gvk := range k.watchedKinds() {
		informer, err := member.GetCache().GetInformer(context.Background(), objectOf(gvk), cache.BlockUntilSynced(false))
		if err != nil {
			continue
		}
		if s, ok := informer.(interface{ GetStore() toolscache.Store }); ok {
			counts[gvk.GroupKind().String()] += len(s.GetStore().ListKeys())
		}
	}
	return counts
}

// kindsOf returns the kinds of a Work's manifests and of what its
// AppliedWork records.
func kindsOf(ms []*manifest, aw *placementv1beta1.AppliedWork) sets.Set[schema.GroupVersionKind] {
	kinds := sets.New[schema.GroupVersionKind]()
	for _, m := range ms {
		if m.obj != nil {
			kinds.Insert(m.obj.GroupVersionKind())
		}
	}
	for _, res := range aw.Status.AppliedResources {
		kinds.Insert(gvkOf(res.WorkResourceIdentifier))
	}
	return kinds
}

func gvkOf(id placementv1beta1.WorkResourceIdentifier) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}
}

func objectOf(gvk schema.GroupVersionKind) client.Object {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// handler enqueues the Works of a changed object, except the Work whose own
// write a create or update event only brings back. A deletion is always
// handed on: one seen on a relist carries the object's last known state,
// which may be the Work's own write.
func (t *tracker) handler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			t.enqueue(ctx, q, e.Object, nil, true)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			t.enqueue(ctx, q, e.ObjectNew, e.ObjectOld, true)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			t.enqueue(ctx, q, e.Object, nil, false)
		},
	}
}

// enqueue adds the Works of obj (and of its previous version, which an
// update may have moved from one Work to another).
func (t *tracker) enqueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], obj, old client.Object, mayEcho bool) {
	writer, echo := t.echoes.echo(obj, q, mayEcho)
	requests := t.toWork(ctx, obj)
	if old != nil {
		requests = append(requests, t.toWork(ctx, old)...)
	}
	for _, r := range requests {
		if !(echo && r.Name == writer) {
			q.Add(r)
		}
	}
}

// toWork maps an applied object to the Works whose AppliedWorks own it (an
// AppliedWork has its Work's name), or, for an object a placement adopted
// (which has no such owner), to the Works of the placement that manages it.
func (t *tracker) toWork(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ref := range o.GetOwnerReferences() {
		if isAppliedWork(ref) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.namespace, Name: ref.Name}})
		}
	}
	identity := o.GetAnnotations()[placementv1beta1.OwnerAnnotation]
	if len(out) > 0 || identity == "" {
		return out
	}
	works := &placementv1beta1.WorkList{}
	if err := t.hub.List(ctx, works, client.InNamespace(t.namespace)); err != nil {
		log.FromContext(ctx).Error(err, "listing Works to map an adopted object to its placement", "object", client.ObjectKeyFromObject(o))
		return nil
	}
	for i := range works.Items {
		if ownerOf(&works.Items[i]).identity == identity {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&works.Items[i])})
		}
	}
	return out
}

// applying tells the tracker that work is applying obj now, before it
// reads or writes it; the function it returns, that the apply is over, with
// the object as its write returned it (nil if it wrote nothing).
func (t *tracker) applying(work string, obj client.Object) func(written client.Object) {
	return t.echoes.applying(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.namespace, Name: work}}, obj)
}

// echoes tells the watch events that only bring back the syncer's own
// writes from those that change something. An apply assesses its objects
// from what its writes return, so the event of each write need not apply
// the Work again: without this, every Work was applied twice, the second
// time finding everything as it had just written it. Its own lock, not the
// tracker's: the tracker stops informers under that one, and an informer
// stops only once its handlers return.
type echoes struct {
	mu sync.Mutex
	// writes maps an object's UID to the last write of it an apply made;
	// byWork, a Work to the objects its last apply wrote.
	writes map[types.UID]ownWrite
	byWork map[string]sets.Set[types.UID]
	// inFlight holds the objects being applied, each with its Work and the
	// events of it that came meanwhile: whether one of them brings back
	// the apply's own write is known only once the write returns (a
	// watch can be faster than the writing goroutine).
	inFlight map[objectKey]*inFlightApply
}

type ownWrite struct{ work, resourceVersion string }

type inFlightApply struct {
	work reconcile.Request
	held []heldEvent
}

type heldEvent struct {
	resourceVersion string
	queue           workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func keyOfObject(obj client.Object) objectKey {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return objectKey{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()}
}

// applying holds the create and update events of obj for work until the
// function it returns is called with what the apply wrote. An object
// another Work applies at the same moment is not held for this one.
func (e *echoes) applying(work reconcile.Request, obj client.Object) func(written client.Object) {
	key := keyOfObject(obj)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inFlight == nil {
		e.inFlight = map[objectKey]*inFlightApply{}
	}
	if _, ok := e.inFlight[key]; ok {
		return func(written client.Object) { e.wrote(work.Name, written) }
	}
	e.inFlight[key] = &inFlightApply{work: work}
	return func(written client.Object) { e.applied(key, written) }
}

// applied ends an apply: the held event that brings back its write is
// dropped, every other one queues the Work, and a write whose event has
// not come yet is recorded for it.
func (e *echoes) applied(key objectKey, written client.Object) {
	e.mu.Lock()
	a := e.inFlight[key]
	delete(e.inFlight, key)
	var wake []workqueue.TypedRateLimitingInterface[reconcile.Request]
	echoed := false
	for _, h := range a.held {
		if written != nil && !echoed && h.resourceVersion == written.GetResourceVersion() {
			echoed = true
			continue
		}
		wake = append(wake, h.queue)
	}
	if written != nil && !echoed {
		e.record(a.work.Name, written)
	}
	e.mu.Unlock()
	for _, q := range wake {
		q.Add(a.work)
	}
}

// wrote records that a Work's apply wrote obj, as the write returned it
// (nothing if obj is nil).
func (e *echoes) wrote(work string, obj client.Object) {
	if obj == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.record(work, obj)
}

func (e *echoes) record(work string, obj client.Object) {
	if e.writes == nil {
		e.writes, e.byWork = map[types.UID]ownWrite{}, map[string]sets.Set[types.UID]{}
	}
	if e.byWork[work] == nil {
		e.byWork[work] = sets.New[types.UID]()
	}
	e.writes[obj.GetUID()] = ownWrite{work: work, resourceVersion: obj.GetResourceVersion()}
	e.byWork[work].Insert(obj.GetUID())
}

// echo tells whether the Work it names need not be queued for an event of
// obj: the event brings back exactly what that Work's own write returned,
// or (mayHold) that Work is applying obj now and the event waits for the
// apply's end. A record serves one event: the write's, or a later
// change's. A deletion (mayHold false) is never an echo.
func (e *echoes) echo(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request], mayHold bool) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, ok := e.inFlight[keyOfObject(obj)]; ok && mayHold {
		a.held = append(a.held, heldEvent{resourceVersion: obj.GetResourceVersion(), queue: q})
		return a.work.Name, true
	}
	w, ok := e.writes[obj.GetUID()]
	if !ok {
		return "", false
	}
	delete(e.writes, obj.GetUID())
	e.byWork[w.work].Delete(obj.GetUID())
	return w.work, mayHold && w.resourceVersion == obj.GetResourceVersion()
}

// forget drops the records of a Work's writes: when the Work is gone, and
// when it is applied again — that apply may judge an object from a cache
// that has not caught up with them yet, and their events must then bring
// the Work back.
func (e *echoes) forget(work string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for uid := range e.byWork[work] {
		if e.writes[uid].work == work {
			delete(e.writes, uid)
		}
	}
	delete(e.byWork, work)
}
