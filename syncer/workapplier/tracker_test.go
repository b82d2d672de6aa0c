package workapplier

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// The event of a Work's own write does not apply that Work again, even when
// it comes before the write has returned; every other event does, as does
// the next one after the echo, a change made since the write, and a
// deletion.
func TestEventsOfTheSyncersOwnWrites(t *testing.T) {
	ctx := context.Background()
	tr := &tracker{namespace: "fleet-member-m1"}
	h := tr.handler()
	o := ownerOf(teamWork(""))
	written := placedConfigMap(o, "5")
	changed := placedConfigMap(o, "6")
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	queued := func() []string {
		var names []string
		for q.Len() > 0 {
			r, _ := q.Get()
			names = append(names, r.Name)
			q.Done(r)
			q.Forget(r)
		}
		return names
	}

	tr.echoes.wrote("w", written)
	h.Create(ctx, event.CreateEvent{Object: written}, q)
	if got := queued(); len(got) != 0 {
		t.Errorf("the event of the Work's own write queued %v", got)
	}
	h.Update(ctx, event.UpdateEvent{ObjectOld: written, ObjectNew: written}, q)
	if got := queued(); len(got) != 1 {
		t.Errorf("an event after the echo queued %v, want the Work", got)
	}

	tr.echoes.wrote("w", written)
	h.Update(ctx, event.UpdateEvent{ObjectOld: written, ObjectNew: changed}, q)
	if got := queued(); len(got) != 1 {
		t.Errorf("a change made since the write queued %v, want the Work", got)
	}

	tr.echoes.wrote("w", written)
	h.Delete(ctx, event.DeleteEvent{Object: written}, q)
	if got := queued(); len(got) != 1 {
		t.Errorf("a deletion queued %v, want the Work", got)
	}

	shared := placedConfigMap(o, "7", metav1.OwnerReference{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "AppliedWork", Name: "w2", UID: "aw2"})
	shared.SetUID("uid-2")
	tr.echoes.wrote("w", shared)
	h.Create(ctx, event.CreateEvent{Object: shared}, q)
	if got := queued(); len(got) != 1 || got[0] != "w2" {
		t.Errorf("the echo of w's write queued %v, want w2 alone", got)
	}

	// An event that comes while the Work is applying the object waits for
	// the write to return: it is the echo if it brings back exactly what
	// the write returned, and queues the Work otherwise.
	applied := tr.applying("w", written)
	h.Create(ctx, event.CreateEvent{Object: written}, q)
	if got := queued(); len(got) != 0 {
		t.Errorf("an event during the apply queued %v at once", got)
	}
	applied(written)
	if got := queued(); len(got) != 0 {
		t.Errorf("the echo that came before its write returned queued %v", got)
	}
	h.Update(ctx, event.UpdateEvent{ObjectOld: written, ObjectNew: written}, q)
	if got := queued(); len(got) != 1 {
		t.Errorf("an event after the early echo queued %v, want the Work", got)
	}
	applied = tr.applying("w", written)
	h.Update(ctx, event.UpdateEvent{ObjectOld: written, ObjectNew: changed}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: changed, ObjectNew: written}, q)
	applied(written)
	if got := queued(); len(got) != 1 {
		t.Errorf("a change and the echo during the apply queued %v, want the Work once", got)
	}
	applied = tr.applying("w", written)
	h.Update(ctx, event.UpdateEvent{ObjectOld: written, ObjectNew: written}, q)
	applied(nil)
	if got := queued(); len(got) != 1 {
		t.Errorf("an event during an apply that wrote nothing queued %v, want the Work", got)
	}
	applied = tr.applying("w", written)
	h.Delete(ctx, event.DeleteEvent{Object: written}, q)
	if got := queued(); len(got) != 1 {
		t.Errorf("a deletion during the apply queued %v, want the Work at once", got)
	}
	applied(nil)

	// The Work's next apply (or its deletion) forgets what the last one
	// wrote: it may have judged the object from a cache behind the write,
	// and the write's event must bring the Work back.
	tr.echoes.wrote("w", written)
	tr.echoes.wrote("w", shared)
	tr.echoes.forget("w")
	h.Create(ctx, event.CreateEvent{Object: written}, q)
	if got := queued(); len(got) != 1 {
		t.Errorf("after the Work's records are forgotten, an event queued %v, want the Work", got)
	}
	h.Create(ctx, event.CreateEvent{Object: shared}, q)
	if got := queued(); len(got) != 2 {
		t.Errorf("after the Work's records are forgotten, an event of its other object queued %v, want both Works", got)
	}
}

// informerRemovals is a member cluster whose cache records the informers
// the trackers stop.
type informerRemovals struct {
	cluster.Cluster
	removed []string
}

func (m *informerRemovals) GetCache() cache.Cache { return removalCache{m: m} }

type removalCache struct {
	cache.Cache
	m *informerRemovals
}

func (c removalCache) RemoveInformer(_ context.Context, obj client.Object) error {
	c.m.removed = append(c.m.removed, obj.GetObjectKind().GroupVersionKind().Kind)
	return nil
}

// The appliers of a member's homes of Work share its informers: a kind's
// informer stays while a Work of any home uses it, and once none does it
// stops, and no applier counts itself as watching it any more.
func TestAppliersOfSeveralHomesShareTheMembersInformers(t *testing.T) {
	ctx := context.Background()
	member := &informerRemovals{}
	kinds := NewKinds()
	root := newTracker(kinds, nil, member, nil, "fleet-member-m1", "m1")
	shard := newTracker(kinds, nil, member, nil, "fleet-member-m1", "m1")
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	root.watched.Insert(configMap)
	shard.watched.Insert(configMap, secret)

	if err := root.use(ctx, "root-work", sets.New(configMap)); err != nil {
		t.Fatal(err)
	}
	if err := shard.use(ctx, "shard-work", sets.New(configMap, secret)); err != nil {
		t.Fatal(err)
	}
	if err := root.forget(ctx, "root-work"); err != nil {
		t.Fatal(err)
	}
	if len(member.removed) != 0 {
		t.Fatalf("stopped %v while the other home's Work uses them", member.removed)
	}
	if err := shard.use(ctx, "shard-work", sets.New(secret)); err != nil {
		t.Fatal(err)
	}
	if len(member.removed) != 1 || member.removed[0] != "ConfigMap" {
		t.Fatalf("stopped %v once no Work uses ConfigMaps, want the ConfigMap informer alone", member.removed)
	}
	if root.watched.Has(configMap) || shard.watched.Has(configMap) {
		t.Errorf("an applier still counts itself watching ConfigMaps after their informer stopped")
	}
	if !shard.watched.Has(secret) {
		t.Errorf("the Secret watch went with the ConfigMap informer")
	}
}
