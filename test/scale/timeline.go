package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// The steps of a placement's pipeline a timeline records, in order.
const (
	stepScheduled = "scheduled" // the scheduler wrote the binding
	stepBound     = "bound"     // the rollout bound it
	stepWork      = "work"      // the work generator wrote the Work
	stepApplied   = "applied"   // the member reported the Work Available
	stepReported  = "reported"  // the binding's status says Available
)

var steps = []string{stepScheduled, stepBound, stepWork, stepApplied, stepReported}

// timeline records when each binding and Work of one placement first
// reached each step, from watches of everything after the placement's
// creation: where the time from create to Available goes.
type timeline struct {
	start time.Time
	mu    sync.Mutex
	at    map[string]map[string]time.Duration // step → object → first time
	stop  []watch.Interface
}

// watchTimeline starts watching the bindings of a placement created at
// start in its workspace (team), and its Works in the platform workspace
// (platform), from the placement's creation on (its resource version): a
// watch from now would first read every Work of the fleet from the hub
// being measured.
func watchTimeline(ctx context.Context, team, platform client.WithWatch, created *placementv1beta1.ClusterResourcePlacement, start time.Time) (*timeline, error) {
	t := &timeline{start: start, at: map[string]map[string]time.Duration{}}
	for _, s := range steps {
		t.at[s] = map[string]time.Duration{}
	}
	byPlacement := client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: created.Name}
	from := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: created.ResourceVersion}}
	for _, w := range []struct {
		c    client.WithWatch
		list client.ObjectList
	}{{team, &placementv1beta1.ClusterResourceBindingList{}}, {platform, &placementv1beta1.WorkList{}}} {
		wi, err := w.c.Watch(ctx, w.list, byPlacement, from)
		if err != nil {
			t.Stop()
			return nil, err
		}
		t.stop = append(t.stop, wi)
		go t.record(wi)
	}
	return t, nil
}

func (t *timeline) record(w watch.Interface) {
	for ev := range w.ResultChan() {
		if ev.Type != watch.Added && ev.Type != watch.Modified {
			continue
		}
		now := time.Since(t.start)
		switch o := ev.Object.(type) {
		case *placementv1beta1.ClusterResourceBinding:
			t.reached(stepScheduled, o.Name, now)
			if o.Spec.State == placementv1beta1.BindingStateBound {
				t.reached(stepBound, o.Name, now)
			}
			if trueAt(o.Status.Conditions, string(placementv1beta1.ResourceBindingAvailable), o.Generation) {
				t.reached(stepReported, o.Name, now)
			}
		case *placementv1beta1.Work:
			key := o.Namespace + "/" + o.Name
			t.reached(stepWork, key, now)
			if acknowledged(o) {
				t.reached(stepApplied, key, now)
			}
		}
	}
}

func (t *timeline) reached(step, object string, at time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.at[step][object]; !ok {
		t.at[step][object] = at
	}
}

// Stop ends the watches.
func (t *timeline) Stop() {
	for _, w := range t.stop {
		w.Stop()
	}
}

// String tells, for each step, how many objects reached it and when the
// first, half, nine in ten and the last of them did.
func (t *timeline) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, s := range steps {
		times := make([]time.Duration, 0, len(t.at[s]))
		for _, d := range t.at[s] {
			times = append(times, d)
		}
		if len(times) == 0 {
			fmt.Fprintf(&b, " %s: none;", s)
			continue
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		ms := func(q float64) time.Duration { return times[int(q*float64(len(times)-1))].Round(time.Millisecond) }
		fmt.Fprintf(&b, " %s %d: %s/%s/%s/%s;", s, len(times), ms(0), ms(0.5), ms(0.9), ms(1))
	}
	return strings.TrimSuffix(strings.TrimSpace(b.String()), ";")
}
