package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// realFleet measures with real member clusters on this machine (each a
// kube-apiserver and etcd with kwok nodes, internal/localcluster) joined by
// `kubectl fleet join --run`, so the real syncers apply.
type realFleet struct {
	*fleet
	hub     *localfleet.Hub
	members []*localfleet.Member
	team    client.WithWatch
}

func (f *realFleet) start(ctx context.Context, dir string, n int) error {
	var specs []localfleet.MemberSpec
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("member-%d", i)
		// Heartbeats at join's default period, as in production.
		specs = append(specs, localfleet.MemberSpec{Name: name, Labels: map[string]string{"env": "bench"},
			Nodes: localfleet.Nodes(fmt.Sprintf("m%d", i), 1, "8", "32Gi", nil), HeartbeatSeconds: 60})
	}
	logf("starting %d member clusters and their syncers", n)
	members, err := f.hub.StartMembers(ctx, filepath.Join(dir, "members"), specs)
	f.members = members
	if err != nil {
		return err
	}
	for _, m := range members {
		if err := f.hub.WaitMemberReady(ctx, m.Name); err != nil {
			return err
		}
	}
	path, err := f.hub.CreateTeamWorkspace(ctx, framework.UniqueName("bench"))
	if err != nil {
		return err
	}
	f.team, err = client.NewWithWatch(f.in(path), client.Options{Scheme: scheme})
	return err
}

func (f *realFleet) stop() {
	for _, m := range f.members {
		_ = m.Stop()
	}
}

// measure takes the real-member figures.
func (f *realFleet) measure(ctx context.Context, res *results) error {
	for _, step := range []func(context.Context, *results) error{f.createToAvailable, f.changeToMembers, f.changeToMembersTogether, f.idle, f.syncerThroughput} {
		if err := step(ctx, res); err != nil {
			return err
		}
	}
	return nil
}

// appNamespace creates a namespace in the team workspace with ConfigMaps
// settings-0..n-1, and returns a PickAll placement of it.
func (f *realFleet) appNamespace(ctx context.Context, name string, configMaps int) (*placementv1beta1.ClusterResourcePlacement, error) {
	if err := f.team.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return nil, err
	}
	err := parallelDo(configMaps, func(i int) error {
		return f.team.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings-" + strconv.Itoa(i)},
			Data: map[string]string{"rev": "0"}})
	})
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType},
		},
	}, err
}

// createToAvailable times new PickAll placements from creation until
// Available on every member.
func (f *realFleet) createToAvailable(ctx context.Context, res *results) error {
	const samples = 5
	platform, err := client.NewWithWatch(f.in(tenancyv1alpha1.FleetWorkspace.String()), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var took []time.Duration
	for i := 0; i < samples; i++ {
		crp, err := f.appNamespace(ctx, fmt.Sprintf("bench-create-%d", i), 1)
		if err != nil {
			return err
		}
		var pipeline *timeline
		d, err := timeToAvailable(ctx, f.team, crp, func(start time.Time) (err error) {
			pipeline, err = watchTimeline(ctx, f.team, platform, crp, start)
			return err
		})
		if pipeline != nil {
			pipeline.Stop()
		}
		if err != nil {
			return err
		}
		logf("%s: Available on %d members after %s (%s)", crp.Name, len(f.members), d.Round(time.Millisecond), pipeline)
		took = append(took, d)
	}
	res.durations("real_create_available", took, map[string]string{"p50": "0.69 (median, this machine)"},
		fmt.Sprintf("PickAll of a namespace and a ConfigMap over %d real members, n=%d; target p50 <= 0.3 s", len(f.members), samples))
	return nil
}

// changeToMembers changes a placed ConfigMap on the hub and times until
// every member has the change, and how far apart the members got it, with
// the default rolling update: maxUnavailable 25% of 3 members rounds up to
// one, so the rollout updates the members one after another by design.
func (f *realFleet) changeToMembers(ctx context.Context, res *results) error {
	crp, err := f.appNamespace(ctx, "bench-change", 1)
	if err != nil {
		return err
	}
	all, spread, err := f.timeChanges(ctx, crp)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("ConfigMap patched on the hub until it changed on all %d real members (default rollout: one member at a time), n=%d", len(f.members), len(all))
	res.durations("real_change_all_members", all, map[string]string{"p50": "0.474 (this machine)", "p90": "0.618 (this machine)"}, note+"; target p50 <= 0.2 s, p99 <= 1 s")
	res.durations("real_change_delivery_spread", spread, nil, "first to last member for the same change, one rollout step after another")
	return nil
}

// changeToMembersTogether takes the same figures for a placement whose
// rollout may update every member at once (maxUnavailable 100%): how far
// apart the Works reach the members when nothing holds them back.
func (f *realFleet) changeToMembersTogether(ctx context.Context, res *results) error {
	crp, err := f.appNamespace(ctx, "bench-change-together", 1)
	if err != nil {
		return err
	}
	all100 := intstr.FromString("100%")
	crp.Spec.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: &all100}
	all, spread, err := f.timeChanges(ctx, crp)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("as real_change_all_members with maxUnavailable 100%%, n=%d", len(all))
	res.durations("real_change_all_members_together", all, nil, note)
	res.durations("real_change_delivery_spread_together", spread, nil, "first to last member for the same change, every member updated at once; target <= 0.05 s")
	return nil
}

// timeChanges places crp, then patches its ConfigMap settings-0 on the hub
// again and again, and returns how long each change took to reach every
// member and how far apart the first and the last member got it.
func (f *realFleet) timeChanges(ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement) (all, spread []time.Duration, err error) {
	const samples = 20
	if _, err := timeToAvailable(ctx, f.team, crp, nil); err != nil {
		return nil, nil, err
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	arrivals, err := f.watchMembers(watchCtx, crp.Name, "settings-0")
	if err != nil {
		return nil, nil, err
	}
	for i := 1; i <= samples; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: crp.Name, Name: "settings-0"}}
		patch := client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"data":{"rev":"%d"}}`, i)))
		start := time.Now()
		if err := f.team.Patch(ctx, cm, patch); err != nil {
			return nil, nil, err
		}
		first, last, err := waitArrivals(ctx, arrivals, strconv.Itoa(i), len(f.members))
		if err != nil {
			return nil, nil, fmt.Errorf("change %d of %s: %w", i, crp.Name, err)
		}
		all, spread = append(all, last.Sub(start)), append(spread, last.Sub(first))
		time.Sleep(200 * time.Millisecond)
	}
	return all, spread, nil
}

// arrival is a member seeing a revision of the watched ConfigMap.
type arrival struct {
	member string
	rev    string
	at     time.Time
}

// watchMembers watches one ConfigMap on every member and reports each
// revision as it arrives.
func (f *realFleet) watchMembers(ctx context.Context, namespace, name string) (<-chan arrival, error) {
	out := make(chan arrival, 100)
	for _, m := range f.members {
		cs, err := kubernetes.NewForConfig(m.Cluster.Config())
		if err != nil {
			return nil, err
		}
		w, err := cs.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			return nil, err
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Modified {
					out <- arrival{member: m.Name, rev: cm.Data["rev"], at: time.Now()}
				}
			}
		}()
	}
	return out, nil
}

// waitArrivals waits until n members have seen rev, and returns when the
// first and the last did.
func waitArrivals(ctx context.Context, arrivals <-chan arrival, rev string, n int) (time.Time, time.Time, error) {
	seen := map[string]time.Time{}
	var first, last time.Time
	timeout := time.After(time.Minute)
	for len(seen) < n {
		select {
		case a := <-arrivals:
			if a.rev != rev || !seen[a.member].IsZero() {
				continue
			}
			seen[a.member] = a.at
			if first.IsZero() {
				first = a.at
			}
			last = a.at
		case <-timeout:
			return first, last, fmt.Errorf("revision %s reached %d of %d members in a minute", rev, len(seen), n)
		case <-ctx.Done():
			return first, last, ctx.Err()
		}
	}
	return first, last, nil
}

// syncerThroughput places many ConfigMaps and reads from the syncers'
// metrics how fast they applied them: on one member while the others are
// idle (the target is per member, whose API server has its machine to
// itself in a real fleet), then on all of them at once, three API servers
// and their syncers sharing this machine's cores.
func (f *realFleet) syncerThroughput(ctx context.Context, res *results) error {
	one := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{f.members[0].Name}}
	if err := f.applyRate(ctx, res, "syncer_apply_rate", "bench-bulk-one", one); err != nil {
		return err
	}
	return f.applyRate(ctx, res, "syncer_apply_rate_all_members", "bench-bulk", nil)
}

// applyRate places a namespace of 1,000 ConfigMaps (by policy, or on every
// member) and records the objects placed per second of Work apply time on
// each member: a Work applied again (a retry, an event) costs time and
// places nothing more.
func (f *realFleet) applyRate(ctx context.Context, res *results, figure, namespace string, policy *placementv1beta1.PlacementPolicy) error {
	const objects = 1000
	before, err := f.applied()
	if err != nil {
		return err
	}
	crp, err := f.appNamespace(ctx, namespace, objects)
	if err != nil {
		return err
	}
	members := len(f.members)
	if policy != nil {
		crp.Spec.Policy, members = policy, len(policy.ClusterNames)
	}
	d, err := timeToAvailable(ctx, f.team, crp, nil)
	if err != nil {
		return err
	}
	after, err := f.applied()
	if err != nil {
		return err
	}
	placed := float64((objects + 1) * members) // and the namespace
	manifests, seconds := after.manifests-before.manifests, after.seconds-before.seconds
	res.add(figure, placed/seconds, "objects/s", "", fmt.Sprintf("%.0f objects placed on %d of %d members in %.1f s of Work applies, %.0f manifests applied (%.2f times each; placement Available after %.1f s); target >= 200 per member",
		placed, members, len(f.members), seconds, manifests, manifests/placed, d.Seconds()))
	return nil
}

type applyTotals struct{ manifests, seconds float64 }

// applied sums the syncers' applied manifests and time spent applying.
func (f *realFleet) applied() (applyTotals, error) {
	var t applyTotals
	for _, m := range f.members {
		metrics, err := localfleet.Scrape(m.MetricsURL())
		if err != nil {
			return t, err
		}
		n, _ := metrics.Sum("fleet_manifests_applied_total", map[string]string{"result": "applied"})
		t.manifests += n
		if fam, ok := metrics["fleet_work_apply_duration_seconds"]; ok {
			for _, s := range fam.Metric {
				t.seconds += s.Histogram.GetSampleSum()
			}
		}
	}
	return t, nil
}

// syncerHubRequests sums the requests the syncers made to the hub.
func (f *realFleet) syncerHubRequests() (float64, error) {
	var n float64
	for _, m := range f.members {
		metrics, err := localfleet.Scrape(m.MetricsURL())
		if err != nil {
			return 0, err
		}
		requests, _ := metrics.Sum("fleet_api_requests_total", map[string]string{"target": "hub"})
		n += requests
	}
	return n, nil
}

// idle measures the hub and the syncers at rest, with the small placements
// above in place (before the bulk one).
func (f *realFleet) idle(ctx context.Context, res *results) error {
	const settle, window = 30 * time.Second, time.Minute
	logf("letting the fleet settle for %s, then measuring the idle hub for %s", settle, window)
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	pid := f.hub.Pid()
	cpu0, err := cpuSecondsOf(pid)
	if err != nil {
		return err
	}
	requests0, err := f.syncerHubRequests()
	if err != nil {
		return err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return ctx.Err()
	}
	cpu1, err := cpuSecondsOf(pid)
	if err != nil {
		return err
	}
	requests1, err := f.syncerHubRequests()
	if err != nil {
		return err
	}
	res.add("idle_syncer_hub_requests", (requests1-requests0)*float64(time.Minute)/float64(window)/float64(len(f.members)), "/min", "", "requests each syncer made to the hub in the idle window")
	rss, err := rssOf(pid)
	if err != nil {
		return err
	}
	f.prof.heap(ctx, "idle")
	res.add("idle_hub_cpu", (cpu1-cpu0)*float64(time.Minute)/float64(window), "s/min", "1.7 (this machine)", "target <= 2")
	check, err := machineCheck()
	if err != nil {
		return err
	}
	res.add("machine_check_cpu", float64(check)/float64(time.Millisecond), "ms", "", "CPU of a fixed single-threaded workload (SHA-256 of 256 MiB) right after the idle window, to read the run's CPU figures against")
	res.add("idle_hub_rss", float64(rss)/1e6, "MB", "660 (this machine)", "target <= 600")
	var most, mostAnonymous int64
	for _, m := range f.members {
		syncerPid, err := m.SyncerPid()
		if err != nil {
			return err
		}
		if r, err := rssOf(syncerPid); err == nil && r > most {
			most = r
		}
		if r, err := anonymousRSSOf(syncerPid); err == nil && r > mostAnonymous {
			mostAnonymous = r
		}
	}
	res.add("idle_syncer_rss", float64(most)/1e6, "MB", "32.8 (member agent)", "the largest of the syncers; target <= 40")
	res.add("idle_syncer_rss_anonymous", float64(mostAnonymous)/1e6, "MB", "", "the largest of the syncers' own memory, without the pages of its binary")
	return nil
}
