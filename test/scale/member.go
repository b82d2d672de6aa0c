package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/huburl"
	"github.com/fleetplane/fleetplane/internal/workhomes"
)

// member is a simulated member cluster: a lightweight agent that talks to
// the real hub with the member's own scoped credential, as a syncer would,
// but applies nothing: it heart-beats its InternalMemberCluster with made-up
// properties and acknowledges every Work as Applied and Available.
type member struct {
	name   string
	labels map[string]string
	nodes  int
	// hub is a client of root:fleet with the member's token, and cfg its
	// config.
	hub client.WithWatch
	cfg *rest.Config
	// imc is the InternalMemberCluster as last written, nil to read it.
	imc *clusterv1beta1.InternalMemberCluster
	// homes says that the hub runs on several shards, whose homes of
	// Work the member follows.
	homes bool
}

// home is where the member reads and acknowledges Work: root:fleet, or a
// shard's home of Work.
type home struct {
	name  string
	watch client.WithWatch
	// superseded are versions of Works this member wrote and then wrote
	// again before their watch events came.
	superseded map[string]struct{}
}

func (m *member) namespace() string { return fmt.Sprintf(clusterv1beta1.NamespaceNameFormat, m.name) }

// newMember describes the i-th member: varied labels and node counts, so
// that placements have something to choose by.
func newMember(i int) *member {
	regions := []string{"eastus", "westus", "westeurope", "southeastasia"}
	envs := []string{"prod", "prod", "canary", "staging"}
	return &member{
		name:   fmt.Sprintf("member-%04d", i),
		labels: map[string]string{"region": regions[i%len(regions)], "env": envs[(i/len(regions))%len(envs)], "zone": strconv.Itoa(i % 3)},
		nodes:  1 + i%20,
	}
}

// connect builds the member's hub client from its token.
func (m *member) connect(hub *rest.Config, token string) error {
	cfg := &rest.Config{Host: hub.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: hub.CAData, CAFile: hub.CAFile, Insecure: hub.Insecure},
		QPS: 20, Burst: 40}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	m.hub, m.cfg = c, cfg
	return nil
}

func newHome(name string, c client.WithWatch) *home {
	return &home{name: name, watch: c, superseded: map[string]struct{}{}}
}

// run heart-beats from after delay and acknowledges Work until ctx ends.
func (m *member) run(ctx context.Context, delay, period time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	go m.acknowledgeWork(ctx, newHome(tenancyv1alpha1.FleetWorkspace.String(), m.hub))
	if m.homes {
		go m.followHomes(ctx)
	}
	// Until the hub has set the member up (its InternalMemberCluster and
	// the credential's rights), heartbeats are retried as a syncer retries
	// its failed reconciles: after a second, doubling up to ten; then once
	// a period. (Retried every second, a thousand members waiting made a
	// thousand requests a second that the hub setting them up had to
	// serve first.)
	retry := time.Second
	for ctx.Err() == nil {
		next := period
		if err := m.heartbeat(ctx); err != nil {
			next, retry = retry, min(2*retry, 10*time.Second)
			// Not found and forbidden until the hub has set the member up;
			// refused while a restarted hub is down.
			if ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) && !utilnet.IsConnectionRefused(err) {
				logf("%s: heartbeat: %v", m.name, err)
			}
		} else {
			retry = time.Second
		}
		sleep(ctx, next)
	}
}

// heartbeat reports the member joined and healthy, with its properties.
// Like a syncer, which reads its InternalMemberCluster from its cache, it
// reads it only the first time and after a failed write.
func (m *member) heartbeat(ctx context.Context) error {
	imc := m.imc
	if imc == nil {
		imc = &clusterv1beta1.InternalMemberCluster{}
		if err := m.hub.Get(ctx, client.ObjectKey{Namespace: m.namespace(), Name: m.name}, imc); err != nil {
			return err
		}
	}
	m.imc = nil
	now := metav1.Now()
	st := &imc.Status
	agent := st.MemberAgentStatus()
	agent.LastReceivedHeartbeat = now
	agent.SetJoined(true, imc.Generation)
	meta.SetStatusCondition(&agent.Conditions, metav1.Condition{Type: clusterv1beta1.AgentHealthy, Status: metav1.ConditionTrue,
		Reason: clusterv1beta1.ReasonInternalMemberClusterHealthy, ObservedGeneration: imc.Generation})
	cpu := resource.MustParse(strconv.Itoa(4 * m.nodes))
	mem := resource.MustParse(strconv.Itoa(16*m.nodes) + "Gi")
	usage := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	st.ResourceUsage = clusterv1beta1.ResourceUsage{Capacity: usage, Allocatable: usage, Available: usage, ObservationTime: now}
	st.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
		clusterv1beta1.NodeCountProperty: {Value: strconv.Itoa(m.nodes), ObservationTime: now},
	}
	if err := m.hub.Status().Update(ctx, imc); err != nil {
		return err
	}
	m.imc = imc
	return nil
}

// acknowledgeWork watches the member's Work and writes it as a syncer whose
// applies all succeed does: its cleanup finalizer first, then each new
// generation reported Applied and Available; a deleted Work is released.
// A watch that ends (a hub restart) resumes from the last version seen, as
// the syncer's informer does, and starts over with every Work only when
// the hub no longer has that version. A watch that fails or ends at once
// is retried with the informer's backoff, not at once.
func (m *member) acknowledgeWork(ctx context.Context, h *home) {
	seen := ""
	backoff := watchBackoff()
	for ctx.Err() == nil {
		w, err := h.watch.Watch(ctx, &placementv1beta1.WorkList{}, client.InNamespace(m.namespace()),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: seen, AllowWatchBookmarks: true}})
		if err != nil {
			sleep(ctx, backoff.Step())
			continue
		}
		events := 0
		for ev := range w.ResultChan() {
			events++
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					seen = ""
				}
				continue
			}
			work, ok := ev.Object.(*placementv1beta1.Work)
			if !ok {
				continue
			}
			seen = work.ResourceVersion
			if ev.Type == watch.Deleted || ev.Type == watch.Bookmark {
				continue
			}
			if err := h.handle(ctx, work); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				logf("%s: acknowledging Work %s in %s: %v", m.name, work.Name, h.name, err)
			}
		}
		w.Stop()
		if events == 0 {
			sleep(ctx, backoff.Step())
		} else {
			backoff = watchBackoff()
		}
	}
}

// watchBackoff is client-go's reflector's: 0.8 s doubling up to 30 s, each
// wait stretched by up to as much again at random, so that members whose
// watches broke together (a hub restart) do not all retry together.
func watchBackoff() wait.Backoff {
	return wait.Backoff{Duration: 800 * time.Millisecond, Factor: 2, Jitter: 1, Cap: 30 * time.Second, Steps: math.MaxInt32}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// handle makes the writes a syncer makes for one state of a Work. A
// conflict is left to the watch event of the newer version.
func (h *home) handle(ctx context.Context, work *placementv1beta1.Work) error {
	if !work.DeletionTimestamp.IsZero() {
		if controllerutil.RemoveFinalizer(work, placementv1beta1.WorkFinalizer) {
			return h.watch.Update(ctx, work)
		}
		return nil
	}
	if _, ok := h.superseded[work.ResourceVersion]; ok {
		delete(h.superseded, work.ResourceVersion)
		return nil
	}
	if controllerutil.AddFinalizer(work, placementv1beta1.WorkFinalizer) {
		if err := h.watch.Update(ctx, work); err != nil {
			return err
		}
		// The status is written next: the event of this version is stale.
		h.superseded[work.ResourceVersion] = struct{}{}
	}
	if acknowledged(work) {
		return nil
	}
	return h.acknowledge(ctx, work)
}

func acknowledged(w *placementv1beta1.Work) bool {
	return trueAt(w.Status.Conditions, placementv1beta1.WorkConditionTypeAvailable, w.Generation)
}

func (h *home) acknowledge(ctx context.Context, work *placementv1beta1.Work) error {
	gen := work.Generation
	cond := func(t, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: gen, LastTransitionTime: metav1.Now()}
	}
	st := placementv1beta1.WorkStatus{Conditions: []metav1.Condition{
		cond(placementv1beta1.WorkConditionTypeApplied, placementv1beta1.WorkAllManifestsAppliedReason),
		cond(placementv1beta1.WorkConditionTypeAvailable, placementv1beta1.WorkAllManifestsAvailableReason),
	}}
	for i, mf := range work.Spec.Workload.Manifests {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct{ Name, Namespace string }
		}
		_ = json.Unmarshal(mf.Raw, &obj)
		gv, _ := schema.ParseGroupVersion(obj.APIVersion)
		st.ManifestConditions = append(st.ManifestConditions, placementv1beta1.ManifestCondition{
			Identifier: placementv1beta1.WorkResourceIdentifier{Ordinal: i, Group: gv.Group, Version: gv.Version, Kind: obj.Kind, Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace},
			Conditions: []metav1.Condition{cond(placementv1beta1.WorkConditionTypeApplied, placementv1beta1.ApplyResultApplied),
				cond(placementv1beta1.WorkConditionTypeAvailable, placementv1beta1.AvailabilityResultAvailable)},
		})
	}
	work.Status = st
	return h.watch.Status().Update(ctx, work)
}

// followHomes acknowledges, as a syncer does, the Work of each shard's
// home the hub names (on a hub of several shards), with the token it
// gives, from the moment it names it.
func (m *member) followHomes(ctx context.Context) {
	started := map[string]bool{}
	backoff := watchBackoff()
	for ctx.Err() == nil {
		w, err := m.hub.Watch(ctx, &corev1.SecretList{}, client.InNamespace(m.namespace()), client.HasLabels{workhomes.Label})
		if err != nil {
			sleep(ctx, backoff.Step())
			continue
		}
		for ev := range w.ResultChan() {
			secret, ok := ev.Object.(*corev1.Secret)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			h, err := workhomes.FromSecret(secret)
			if err != nil || started[h.Shard] {
				continue
			}
			cfg := rest.CopyConfig(m.cfg)
			cfg.Host = huburl.Base(cfg.Host) + "/clusters/" + h.Cluster
			if h.Token != "" {
				cfg.BearerToken = h.Token
			}
			c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
			if err != nil {
				logf("%s: the home of shard %s: %v", m.name, h.Shard, err)
				continue
			}
			started[h.Shard] = true
			go m.acknowledgeWork(ctx, newHome("shard "+h.Shard, c))
		}
		w.Stop()
		sleep(ctx, backoff.Step())
	}
}
