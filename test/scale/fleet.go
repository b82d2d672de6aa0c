package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/internal/workhomes"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// parallel is how many requests the harness itself keeps in flight.
const parallel = 32

// fleet drives the hub as its platform admin and the simulated members.
type fleet struct {
	admin   *rest.Config
	opts    options
	members []*member
	prof    *profiler
	// shards are the processes of an embedded hub of several shards, nil
	// for a hub of one.
	shards *localfleet.ShardedHub
}

// in returns an admin config for the workspace at path.
func (f *fleet) in(path string) *rest.Config {
	cfg := rest.CopyConfig(f.admin)
	cfg.Host += "/clusters/" + path
	cfg.QPS, cfg.Burst = 500, 1000
	return cfg
}

// each runs fn for every member, parallel at a time, and returns the first
// error.
func (f *fleet) each(fn func(*member) error) error {
	return parallelDo(len(f.members), func(i int) error {
		if err := fn(f.members[i]); err != nil {
			return fmt.Errorf("%s: %w", f.members[i].name, err)
		}
		return nil
	})
}

// oneClientCreates is how many MemberClusters are created one after another
// and timed one by one.
const oneClientCreates = 100

// parallelDo runs fn(0..n-1), parallel at a time, and returns the first
// error.
func parallelDo(n int, fn func(int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, parallel)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// join registers the members as `kubectl fleet join` does (a service
// account and a short-lived token each, then the MemberCluster), times
// the MemberClusters' creation and how long until every member is joined
// and healthy, and leaves the simulated agents running.
func (f *fleet) join(ctx context.Context, res *results) error {
	fleetCfg := f.in(tenancyv1alpha1.FleetWorkspace.String())
	c, err := client.NewWithWatch(fleetCfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(fleetCfg)
	if err != nil {
		return err
	}
	for i := 0; i < f.opts.members; i++ {
		f.members = append(f.members, newMember(i))
	}
	ns := clusterv1beta1.FleetSystemNamespace
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	logf("issuing %d member credentials", f.opts.members)
	tokens := sync.Map{}
	err = f.each(func(m *member) error {
		sa := "fleet-syncer-" + m.name
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(6 * 3600))}}
		tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, req, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		tokens.Store(m.name, tok.Status.Token)
		return nil
	})
	if err != nil {
		return err
	}

	create := func(m *member) error {
		mc := &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: m.name, Labels: m.labels},
			Spec: clusterv1beta1.MemberClusterSpec{
				Identity:               rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "fleet-syncer-" + m.name},
				HeartbeatPeriodSeconds: int32(f.opts.heartbeat.Seconds()),
			},
		}
		return client.IgnoreAlreadyExists(c.Create(ctx, mc))
	}
	// The last ones are created one after another by one client, each
	// timed on the client: what one write costs, as a user sees it.
	sequential := min(oneClientCreates, len(f.members)/2)
	concurrent := f.members[:len(f.members)-sequential]
	logf("creating %d MemberClusters, %d at a time, then %d one after another", f.opts.members, parallel, sequential)
	start := time.Now()
	err = parallelDo(len(concurrent), func(i int) error { return create(concurrent[i]) })
	if err != nil {
		return err
	}
	var each []time.Duration
	for _, m := range f.members[len(concurrent):] {
		sent := time.Now()
		if err := create(m); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		each = append(each, time.Since(sent))
	}
	res.add("members_create", time.Since(start).Seconds(), "s", "2.0 (1,000 members, 16 cores)",
		fmt.Sprintf("%d MemberClusters, %d at a time, then the last %d one after another", f.opts.members, parallel, sequential))
	res.durations("member_create_one_client", each, nil,
		fmt.Sprintf("each of the last %d MemberCluster creates, one after another by one client, timed on the client; target p50 <= 5 ms", sequential))

	for i, m := range f.members {
		token, _ := tokens.Load(m.name)
		if err := m.connect(fleetCfg, token.(string)); err != nil {
			return err
		}
		delay := time.Duration(int64(f.opts.heartbeatSpread) * int64(i) / int64(len(f.members)))
		m.homes = f.shards != nil
		go m.run(ctx, delay, f.opts.heartbeat)
	}
	logf("waiting for every member to join (first heartbeats spread over %s)", f.opts.heartbeatSpread)
	waitCtx, cancel := context.WithTimeout(ctx, f.opts.heartbeatSpread+10*time.Minute)
	defer cancel()
	ready := map[string]bool{}
	joined := 0
	err = watchUntil(waitCtx, c, &clusterv1beta1.MemberClusterList{}, func(obj client.Object, deleted bool) bool {
		mc := obj.(*clusterv1beta1.MemberCluster)
		now := !deleted && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy)
		if now != ready[mc.Name] {
			ready[mc.Name] = now
			if now {
				joined++
			} else {
				joined--
			}
		}
		return joined == f.opts.members
	})
	if err != nil {
		return fmt.Errorf("members did not all join: %w", err)
	}
	res.add("members_joined", time.Since(start).Seconds(), "s", "63 (1,000 members, first heartbeats over 60 s, 16 cores)",
		fmt.Sprintf("first heartbeats spread over %s", f.opts.heartbeatSpread))
	return nil
}

// placements times new PickN placements, one after another, from creation
// until Available on every picked cluster, in a team workspace; on a hub
// of several shards, in a team workspace on each shard, whose figures end
// in _on_<shard>. A non-empty load names the figures of a fleet already
// carrying placements.
func (f *fleet) placements(ctx context.Context, res *results, load string) error {
	hub := &localfleet.Hub{Admin: f.admin}
	if f.shards == nil {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("scale"))
		if err != nil {
			return err
		}
		return f.placementsIn(ctx, res, path, tenancyv1alpha1.FleetWorkspace.String(), load, "")
	}
	for i := range f.shards.Shards {
		shard, home := localfleet.ShardName(i), tenancyv1alpha1.FleetWorkspace.String()
		if i > 0 {
			home += ":" + workhomes.WorkspaceName(shard)
		}
		path, err := hub.CreateTeamWorkspaceOn(ctx, framework.UniqueName("scale"), shard)
		if err != nil {
			return err
		}
		if err := f.placementsIn(ctx, res, path, home, load, "_on_"+shard); err != nil {
			return err
		}
	}
	return nil
}

// placementsIn times the placements in the team workspace at path, whose
// shard keeps its Work in the workspace at home; where ends the figures'
// names.
func (f *fleet) placementsIn(ctx context.Context, res *results, path, home, load, where string) error {
	c, err := client.NewWithWatch(f.in(path), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	platform, err := client.NewWithWatch(f.in(home), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	const ns = "scale"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"k": "v"}},
	} {
		if err := c.Create(ctx, o); err != nil {
			return err
		}
	}
	var took []time.Duration
	requests, served := f.prof.requestCounts(), f.prof.apiserverRequests()
	figure := fmt.Sprintf("pickn%d", f.opts.pick)
	kubefleet := map[string]string{"p50": "5.2 (16 cores)", "max": "7.3 (16 cores)"}
	if load != "" {
		figure += "_" + load
		kubefleet = map[string]string{"p90": "21 (KubeFleet's report, 1,000 placements present)"}
	}
	figure += where
	profiled := f.prof.cpu(ctx, figure, 30*time.Second)
	for i := 0; i < f.opts.samples; i++ {
		crp := &placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pickn-%d", i)},
			Spec: placementv1beta1.PlacementSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: ns}},
				Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(int32(f.opts.pick))},
			},
		}
		var pipeline *timeline
		d, err := timeToAvailable(ctx, c, crp, func(start time.Time) (err error) {
			pipeline, err = watchTimeline(ctx, c, platform, crp, start)
			return err
		})
		if pipeline != nil {
			pipeline.Stop()
		}
		if err != nil {
			return err
		}
		logf("%s: Available on %d clusters after %s (%s)", crp.Name, f.opts.pick, d.Round(time.Millisecond), pipeline)
		took = append(took, d)
		if err := deletePlacement(ctx, c, crp); err != nil {
			return err
		}
	}
	profiled()
	f.prof.heap(ctx, figure)
	logRequests(requests, f.prof.requestCounts(), f.opts.samples)
	logRequests(served, f.prof.apiserverRequests(), f.opts.samples)
	res.durations(figure+"_available", took, kubefleet, fmt.Sprintf("of %d members, n=%d", f.opts.members, f.opts.samples))
	return nil
}

// timeToAvailable creates a placement and waits, watching it, until it is
// Available; created, if set, is called once the placement is created, with
// the time the create started.
func timeToAvailable(ctx context.Context, c client.WithWatch, crp *placementv1beta1.ClusterResourcePlacement, created func(start time.Time) error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	w, err := c.Watch(ctx, &placementv1beta1.ClusterResourcePlacementList{}, client.MatchingFields{"metadata.name": crp.Name})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	start := time.Now()
	if err := c.Create(ctx, crp); err != nil {
		return 0, err
	}
	if created != nil {
		if err := created(start); err != nil {
			return 0, err
		}
	}
	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*placementv1beta1.ClusterResourcePlacement)
		if !ok {
			continue
		}
		if isAvailable(got) {
			return time.Since(start), nil
		}
	}
	return 0, fmt.Errorf("placement %s did not become Available: %w", crp.Name, context.Cause(ctx))
}

// deletePlacement deletes a placement and waits, watching it, until it is
// gone (its bindings and Works cleaned up): a poll would read the whole
// placement, status of every cluster included, from the hub being measured.
func deletePlacement(ctx context.Context, c client.WithWatch, crp *placementv1beta1.ClusterResourcePlacement) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		// Watching from before the delete: the deletion's event cannot be
		// missed; a watch the server ends is started again.
		w, err := c.Watch(ctx, &placementv1beta1.ClusterResourcePlacementList{}, client.MatchingFields{"metadata.name": crp.Name})
		if err != nil {
			return err
		}
		if err := c.Delete(ctx, crp); apierrors.IsNotFound(err) {
			w.Stop()
			return nil
		} else if err != nil {
			w.Stop()
			return err
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted {
				w.Stop()
				return nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return fmt.Errorf("placement %s was not deleted: %w", crp.Name, context.Cause(ctx))
		}
	}
}
