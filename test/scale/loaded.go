package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// placementsPerWorkspace is how many of the --load placements share a
// team workspace.
const placementsPerWorkspace = 100

// settle is how long the hub is left alone before its memory is read.
const settle = 30 * time.Second

// load is a fleet carrying many placements: the background the loaded
// figures are taken against.
type load struct {
	f *fleet
	// workspaces holds the placements, placementsPerWorkspace each;
	// clients are the admin's clients of them.
	workspaces []string
	clients    []client.WithWatch
	placements int
	// perWorkspace is how many placements each workspace holds.
	perWorkspace int
}

// connect makes one admin client per workspace (each reads discovery
// once); again after a restart, which gives the admin a new token.
func (l *load) connect() error {
	l.clients = make([]client.WithWatch, len(l.workspaces))
	return parallelDo(len(l.workspaces), func(i int) error {
		c, err := client.NewWithWatch(l.f.in(l.workspaces[i]), client.Options{Scheme: scheme})
		l.clients[i] = c
		return err
	})
}

// loadPlacements creates o.load PickN(o.loadPick) placements and waits
// until all are Available. It records how long that took, the etcd bytes
// each placement-cluster pair costs and the hub's memory then.
func (f *fleet) loadPlacements(ctx context.Context, h *localfleet.Hub, res *results) (*load, error) {
	pairs := f.opts.load * f.opts.loadPick
	before, sizeErr := etcdBytes(ctx, h)
	cpu0, cpuErr := cpuSecondsOf(h.Pid())
	l, took, err := f.newLoad(ctx, h, "load", f.opts.load, f.opts.loadPick, placementsPerWorkspace)
	if err != nil {
		return nil, err
	}
	if cpu1, err := cpuSecondsOf(h.Pid()); err == nil && cpuErr == nil && h.Pid() != 0 {
		res.add("hub_cpu_load", cpu1-cpu0, "s", "", fmt.Sprintf("CPU time the hub used creating the %d placements until all were Available "+
			"(compare runs with --hub-arg=--workload-reports=false for what status reporting costs)", f.opts.load))
	}
	res.add("load_available", took.Seconds(), "s", "", fmt.Sprintf("%d placements x %d clusters created, %d at a time, until all Available (%.0f pairs/s)",
		l.placements, f.opts.loadPick, parallel, float64(pairs)/took.Seconds()))
	if sizeErr == nil {
		after, err := etcdBytes(ctx, h)
		if err == nil {
			total := logGrowth(before, after, pairs)
			res.add("etcd_bytes_per_pair", float64(total)/float64(pairs), "B", "~16,000",
				"keys and values at the current revision, all resources' growth over the placement-cluster pairs")
		}
	}
	f.memory(res, "hub_rss_loaded", "2300 at 1,000 members alone (16 cores)",
		fmt.Sprintf("%d members, %d placements x %d clusters", len(f.members), l.placements, f.opts.loadPick))
	return l, nil
}

// settledMemory records the loaded hub's memory once it is quiet: its
// queues empty, then quietAfterLoad without anything new. hub_rss_loaded
// is read the moment the last placement turns Available, at the top of the
// heap the loading built; this is what the hub keeps to carry the load.
func (l *load) settledMemory(ctx context.Context, h *localfleet.Hub, res *results) error {
	// What the hub does at rest: its members' heartbeats and nothing else.
	lastMinute := func() { l.f.prof.allocs(ctx, "loaded_settled", time.Minute) }
	if err := l.quiet(ctx, h, "loaded", lastMinute); err != nil {
		return err
	}
	l.settledRSS(h, res, "hub_rss_loaded_settled")
	if m, err := localfleet.Scrape(h.MetricsURL()); err == nil {
		heapFigures(m, res, "hub_heap_loaded_settled")
	}
	if size, inUse, err := etcdFile(ctx, h); err == nil {
		res.add("etcd_db_file_loaded", float64(size)/1e6, "MB", "", fmt.Sprintf("the embedded etcd's database file, %.0f MB of it in use", float64(inUse)/1e6))
	}
	// What the live heap at rest is made of, read after the figures above.
	l.f.prof.heap(ctx, "loaded_settled")
	return nil
}

// quiet waits until the hub's queues are empty, then quietAfterLoad more,
// with lastMinute (if any) run for its last minute.
func (l *load) quiet(ctx context.Context, h *localfleet.Hub, what string, lastMinute func()) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, 15*time.Minute, true, func(context.Context) (bool, error) {
		m, err := localfleet.Scrape(h.MetricsURL())
		if err != nil {
			return false, nil
		}
		queued, _ := m.Sum("workqueue_depth", nil)
		return queued == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the %s hub's queues did not empty: %w", what, err)
	}
	logf("letting the %s hub settle for %s", what, quietAfterLoad)
	quiet := time.Now().Add(quietAfterLoad)
	if lastMinute != nil {
		time.Sleep(quietAfterLoad - time.Minute)
		lastMinute()
	}
	time.Sleep(time.Until(quiet))
	return nil
}

// settledRSS records the quiet hub's resident memory as name, and the part
// of it that is its own as name_anonymous.
func (l *load) settledRSS(h *localfleet.Hub, res *results, name string) {
	note := fmt.Sprintf("%d placements x %d clusters, the queues empty and %s quiet", l.placements, l.f.opts.loadPick, quietAfterLoad)
	l.f.memory(res, name, "", note)
	if anon, err := anonymousRSSOf(h.Pid()); err == nil {
		res.add(name+"_anonymous", float64(anon)/1e6, "MB", "", "of it the hub's own memory, without the pages of its binary and of etcd's database file")
	}
}

// heapFigures records how the hub's Go heap stands: the spans in use, and
// of them what holds no object (free slots of partly used spans: the heap's
// fragmentation), against the collector's goal.
func heapFigures(m localfleet.Metrics, res *results, name string) {
	inUse, ok1 := m.Sum("go_memstats_heap_inuse_bytes", nil)
	objects, ok2 := m.Sum("go_memstats_heap_alloc_bytes", nil)
	goal, ok3 := m.Sum("go_memstats_next_gc_bytes", nil)
	idle, _ := m.Sum("go_memstats_heap_idle_bytes", nil)
	released, _ := m.Sum("go_memstats_heap_released_bytes", nil)
	if !ok1 || !ok2 || !ok3 {
		return
	}
	res.add(name+"_in_use", inUse/1e6, "MB", "", fmt.Sprintf("the Go heap's spans in use: %.0f MB of objects (live and not yet collected), the collector's goal %.0f MB; besides them %.0f MB free and kept",
		objects/1e6, goal/1e6, (idle-released)/1e6))
	res.add(name+"_unused", (inUse-objects)/1e6, "MB", "", "of the spans in use, the bytes no object holds (fragmentation)")
}

// quietAfterLoad is how long the loaded hub is left alone before its
// settled memory is read: if it then allocates little, the collector's
// pacer, ticking once a minute, lowers its target and hands back the
// loading's free heap within two (with 1,000 members heart-beating it
// allocates too much for that: docs/performance-history.md, item 54).
const quietAfterLoad = 3 * time.Minute

// tenancy puts o.teams team workspaces on the hub, each with one
// PickN(o.teamPick) placement, records the hub's memory growth per
// workspace, and times PickN placements again in a new workspace.
func (f *fleet) tenancy(ctx context.Context, h *localfleet.Hub, res *results) error {
	time.Sleep(settle)
	processes := f.hubProcesses()
	before := make([]int64, len(processes))
	for i, p := range processes {
		before[i], _ = rssOf(p.pid())
	}
	_, took, err := f.newLoad(ctx, h, "team", f.opts.teams, f.opts.teamPick, 1)
	if err != nil {
		return err
	}
	res.add("teams_available", took.Seconds(), "s", "", fmt.Sprintf("%d team workspaces created, each with a PickN(%d) placement, until all Available", f.opts.teams, f.opts.teamPick))
	logf("letting the hub settle for %s", settle)
	time.Sleep(settle)
	for i, p := range processes {
		after, err := rssOf(p.pid())
		if err != nil || before[i] == 0 {
			continue
		}
		res.add("hub_rss_per_workspace"+p.suffix, float64(after-before[i])/float64(f.opts.teams)/1e6, "MB", "3-4 (kcp's own figure per workspace)",
			fmt.Sprintf("hub resident memory growth over %d team workspaces with a placement each (all shards' workspaces counted), after %s settling", f.opts.teams, settle))
	}
	if err := f.placements(ctx, res, fmt.Sprintf("after_%d_teams", f.opts.teams)); err != nil {
		return err
	}
	// Again once the teams' rollout has quieted down (their workspaces'
	// event recorders stop after two idle minutes, kcp's per-workspace
	// controllers have drained): what a new team meets on a hub that already
	// serves them all, rather than right after they all arrived at once.
	logf("letting the hub settle for %s more", quietAfterTeams)
	time.Sleep(quietAfterTeams)
	return f.placements(ctx, res, fmt.Sprintf("after_%d_teams_settled", f.opts.teams))
}

// quietAfterTeams is how long the hub is left alone after the teams'
// placements were timed, before they are timed again.
const quietAfterTeams = 3 * time.Minute

// newLoad creates n placements, PickN(pick) each, perWorkspace to a new
// team workspace, each of its own namespace with a ConfigMap, and waits
// until all are Available.
func (f *fleet) newLoad(ctx context.Context, h *localfleet.Hub, prefix string, n, pick, perWorkspace int) (*load, time.Duration, error) {
	l := &load{f: f, placements: n, perWorkspace: perWorkspace}
	start := time.Now()
	workspaces := make([]string, (n+perWorkspace-1)/perWorkspace)
	logf("creating %d team workspaces", len(workspaces))
	var ready atomic.Int32
	err := parallelDo(len(workspaces), func(i int) error {
		path, err := h.CreateTeamWorkspace(ctx, fmt.Sprintf("%s-%d-%s", prefix, i, framework.RandomSuffix()))
		workspaces[i] = path
		if err != nil {
			return err
		}
		if n := ready.Add(1); n%100 == 0 {
			logf("%d of %d team workspaces ready after %s", n, len(workspaces), time.Since(start).Round(time.Second))
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	l.workspaces = workspaces
	if err := l.connect(); err != nil {
		return nil, 0, err
	}
	logf("creating %d placements, PickN(%d) each, in %d team workspaces", n, pick, len(workspaces))
	err = parallelDo(n, func(i int) error {
		c := l.clients[i/perWorkspace]
		ns := fmt.Sprintf("load-%d", i)
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"k": "v"}},
			&placementv1beta1.ClusterResourcePlacement{
				ObjectMeta: metav1.ObjectMeta{Name: ns},
				Spec: placementv1beta1.PlacementSpec{
					ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: ns}},
					Policy: &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType,
						NumberOfClusters: ptr.To(int32(pick))},
				},
			},
		} {
			if err := client.IgnoreAlreadyExists(c.Create(ctx, o)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	logf("created in %s; waiting until all are Available", time.Since(start).Round(time.Second))
	if err := l.waitAvailable(ctx, f.opts.loadTimeout); err != nil {
		return nil, 0, err
	}
	return l, time.Since(start), nil
}

// waitAvailable waits, watching the placements of every workspace, until
// each is Available at its generation, logging progress.
func (l *load) waitAvailable(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("not all %d placements Available within %s", l.placements, timeout))
	defer cancel()
	var available atomic.Int64
	done := make(chan struct{})
	defer close(done)
	go func() {
		last := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Second):
			}
			if n := available.Load(); n != last {
				logf("%d of %d placements Available", n, l.placements)
				last = n
			}
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	for i := range l.workspaces {
		want := min(l.perWorkspace, l.placements-i*l.perWorkspace)
		g.Go(func() error {
			ready, n := map[string]bool{}, 0
			return watchUntil(gctx, l.clients[i], &placementv1beta1.ClusterResourcePlacementList{}, func(obj client.Object, deleted bool) bool {
				crp := obj.(*placementv1beta1.ClusterResourcePlacement)
				if now := !deleted && strings.HasPrefix(crp.Name, "load-") && isAvailable(crp); now != ready[crp.Name] {
					ready[crp.Name] = now
					delta := 1
					if !now {
						delta = -1
					}
					n += delta
					available.Add(int64(delta))
				}
				return n == want
			})
		})
	}
	return g.Wait()
}

func (l *load) available(ctx context.Context) (int, error) {
	var n atomic.Int64
	err := parallelDo(len(l.workspaces), func(i int) error {
		list := &placementv1beta1.ClusterResourcePlacementList{}
		if err := l.clients[i].List(ctx, list); err != nil {
			return err
		}
		for _, crp := range list.Items {
			if strings.HasPrefix(crp.Name, "load-") && isAvailable(&crp) {
				n.Add(1)
			}
		}
		return nil
	})
	return int(n.Load()), err
}

func isAvailable(crp *placementv1beta1.ClusterResourcePlacement) bool {
	return trueAt(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType), crp.Generation)
}

// trueAt tells whether conds hold condition t True for generation.
func trueAt(conds []metav1.Condition, t string, generation int64) bool {
	c := meta.FindStatusCondition(conds, t)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

// restart stops the hub and starts it again over the load, and records how
// long until every placement's status is current again (the hub serves,
// every placement has been reconciled since, the controllers' queues are
// empty and every placement is Available) and the Work and binding writes
// the restart caused (kcp's request counters start from zero with the hub),
// with a CPU profile of the restarted hub's first two minutes.
func (l *load) restart(ctx context.Context, h *localfleet.Hub, res *results) error {
	logf("restarting the hub over %d placements", l.placements)
	if err := h.Stop(); err != nil {
		return err
	}
	start := time.Now()
	if err := h.Launch(); err != nil {
		return err
	}
	// The profile starts with the process: what the hub does before it
	// serves counts as much as what it does after.
	profiled := l.f.prof.cpu(ctx, "restart", 2*time.Minute)
	if err := h.WaitReady(ctx); err != nil {
		return err
	}
	res.add("restart_ready", time.Since(start).Seconds(), "s", "", "from starting the stopped hub until it serves /readyz")
	l.f.admin = h.Admin
	if err := l.connect(); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		m, err := localfleet.Scrape(h.MetricsURL())
		if err != nil {
			return false, nil
		}
		reconciled, _ := m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "fleet-placement-crp"})
		queued, _ := m.Sum("workqueue_depth", nil)
		if reconciled < float64(l.placements) || queued > 0 {
			return false, nil
		}
		available, err := l.available(ctx)
		return err == nil && available == l.placements, nil
	})
	if err != nil {
		return fmt.Errorf("placement statuses not current after the restart: %w", err)
	}
	res.add("restart_status_current", time.Since(start).Seconds(), "s", "675 (KubeFleet's report: 11 min 15 s)",
		fmt.Sprintf("every one of %d placements reconciled since the start, the queues empty, all Available", l.placements))
	profiled()
	l.f.prof.heap(ctx, "restart")
	l.f.memory(res, "hub_rss_restarted", "", fmt.Sprintf("once every status is current again after the restart (and the profile's minute has passed), %d placements present", l.placements))
	served := l.f.prof.apiserverMetrics()
	for _, r := range []struct{ figure, resource string }{{"restart_work_writes", "works"}, {"restart_binding_writes", "clusterresourcebindings"}} {
		res.add(r.figure, writesTo(served, r.resource), "requests", "", "creates, updates, patches and deletes (status included) since the restart")
	}
	if !l.f.opts.settleRestarted {
		return nil
	}
	// What the restarted hub keeps once it is quiet, against what the
	// loaded one kept (hub_rss_loaded_settled).
	if err := l.quiet(ctx, h, "restarted", nil); err != nil {
		return err
	}
	l.settledRSS(h, res, "hub_rss_restarted_settled")
	return nil
}

// writesTo sums the write requests to a resource (status included) in a
// scrape of the API server's metrics.
func writesTo(m localfleet.Metrics, resource string) float64 {
	return countBy(m, "apiserver_request_total", func(l map[string]string) string {
		if l["resource"] == resource && writeVerbs[l["verb"]] {
			return "writes"
		}
		return ""
	})["writes"]
}

var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}
