package board

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	"golang.org/x/sync/errgroup"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// settle gathers the changes of a burst (a rollout updates many statuses at
// once) into one notice to the browsers; well under the 2 s a change may
// take to show.
const settle = 300 * time.Millisecond

// watchedKind is one kind the board reads, with the list that proves the
// caller may read it in a workspace.
type watchedKind struct {
	object client.Object
	list   client.ObjectList
}

// watchedKinds are all the kinds a view may need. A workspace serves some
// of them (MemberClusters and ClusterGrants in root:fleet, ClusterProfiles
// where the inventory API is bound) and the caller may read some of those;
// the board watches the rest and leaves the others out of its views.
func watchedKinds() []watchedKind {
	return []watchedKind{
		{&placementv1beta1.ClusterResourcePlacement{}, &placementv1beta1.ClusterResourcePlacementList{}},
		{&placementv1beta1.ResourcePlacement{}, &placementv1beta1.ResourcePlacementList{}},
		{&placementv1beta1.ClusterSchedulingPolicySnapshot{}, &placementv1beta1.ClusterSchedulingPolicySnapshotList{}},
		{&placementv1beta1.SchedulingPolicySnapshot{}, &placementv1beta1.SchedulingPolicySnapshotList{}},
		{&placementv1beta1.ClusterStagedUpdateRun{}, &placementv1beta1.ClusterStagedUpdateRunList{}},
		{&placementv1beta1.StagedUpdateRun{}, &placementv1beta1.StagedUpdateRunList{}},
		{&placementv1beta1.ClusterApprovalRequest{}, &placementv1beta1.ClusterApprovalRequestList{}},
		{&placementv1beta1.ApprovalRequest{}, &placementv1beta1.ApprovalRequestList{}},
		{&placementv1beta1.ClusterWorkloadReport{}, &placementv1beta1.ClusterWorkloadReportList{}},
		{&placementv1beta1.WorkloadReport{}, &placementv1beta1.WorkloadReportList{}},
		{&clusterv1beta1.MemberCluster{}, &clusterv1beta1.MemberClusterList{}},
		{&tenancyv1alpha1.ClusterGrant{}, &tenancyv1alpha1.ClusterGrantList{}},
		{&inventoryv1alpha1.ClusterProfile{}, &inventoryv1alpha1.ClusterProfileList{}},
		{&corev1.Event{}, &corev1.EventList{}},
	}
}

// reprobeAfter is how long the board trusts that a kind it may not read
// stays so: a grant, an RBAC change or a newly bound API shows up on the
// next page opened after it.
const reprobeAfter = time.Minute

// workspaceWatch keeps informers on one workspace with one session's
// credentials, and tells its subscribers when anything in it changed.
type workspaceWatch struct {
	path   logicalcluster.Path
	direct client.Client
	cache  cache.Cache
	// ctx lives as long as the watch; cancel stops its informers.
	ctx    context.Context
	cancel context.CancelFunc
	// reader reads from the informers' caches.
	reader client.Reader

	mu sync.Mutex
	// visible are the kinds watched (served and readable), by Go type.
	visible  map[string]bool
	probedAt time.Time
	// approvals caches the hub's answer to "may the caller approve?", by
	// kind and namespace, for a minute.
	approvals   map[string]approvalAnswer
	version     uint64
	pending     bool
	subscribers map[chan uint64]struct{}
	lastUsed    time.Time
}

// startWatch lists each kind once with the caller's credentials to learn
// which ones it may read here, then watches those.
func startWatch(ctx context.Context, config *rest.Config, path logicalcluster.Path) (*workspaceWatch, error) {
	cfg := inWorkspace(config, path)
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to workspace %s: %w", path, err)
	}
	latest := labels.SelectorFromSet(labels.Set{placementv1beta1.IsLatestSnapshotLabel: "true"})
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, Mapper: direct.RESTMapper(), ByObject: map[client.Object]cache.ByObject{
		&placementv1beta1.ClusterSchedulingPolicySnapshot{}: {Label: latest},
		&placementv1beta1.SchedulingPolicySnapshot{}:        {Label: latest},
	}})
	if err != nil {
		return nil, err
	}
	w := &workspaceWatch{path: path, direct: direct, cache: c, reader: c, visible: map[string]bool{},
		subscribers: map[chan uint64]struct{}{}, lastUsed: time.Now(), approvals: map[string]approvalAnswer{}}
	kinds, err := w.probe(ctx)
	if err != nil {
		return nil, err
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("workspace %s serves nothing this identity may read on the board: is it a team workspace or root:fleet, and does your identity have access to it?", path)
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if err := w.watch(kinds); err != nil {
		w.cancel()
		return nil, err
	}
	go func() {
		if err := c.Start(w.ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Board watch stopped", "workspace", path)
		}
	}()
	syncCtx, done := context.WithTimeout(ctx, time.Minute)
	defer done()
	if !c.WaitForCacheSync(syncCtx) {
		w.cancel()
		return nil, fmt.Errorf("reading workspace %s took longer than a minute: %w", path, errors.Join(ctx.Err(), syncCtx.Err()))
	}
	return w, nil
}

// probe returns the kinds not yet watched that the caller may read here.
// It asks about all of them at once: one after another, 14 lists on a
// busy hub take seconds before the page shows anything.
func (w *workspaceWatch) probe(ctx context.Context) ([]watchedKind, error) {
	all := watchedKinds()
	readable := make([]bool, len(all))
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range all {
		if w.sees(k.object) {
			continue
		}
		g.Go(func() error {
			err := listOnce(gctx, w.direct, k.list)
			switch {
			case err == nil:
				readable[i] = true
			case meta.IsNoMatchError(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
				// Not served here, or not for this caller: the views leave it out.
			case apierrors.IsUnauthorized(err):
				return fmt.Errorf("the hub no longer accepts this session's credentials in workspace %s: sign in again", w.path)
			default:
				return fmt.Errorf("reading %T in workspace %s: %w", k.object, w.path, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var kinds []watchedKind
	for i, k := range all {
		if readable[i] {
			kinds = append(kinds, k)
		}
	}
	w.mu.Lock()
	w.probedAt = time.Now()
	w.mu.Unlock()
	return kinds, nil
}

// watch starts informers on kinds; each change of theirs is a change of
// the workspace.
func (w *workspaceWatch) watch(kinds []watchedKind) error {
	for _, k := range kinds {
		inf, err := w.cache.GetInformer(w.ctx, k.object)
		if err != nil {
			return fmt.Errorf("watching %T in workspace %s: %w", k.object, w.path, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.changed() },
			UpdateFunc: func(any, any) { w.changed() },
			DeleteFunc: func(any) { w.changed() },
		}); err != nil {
			return err
		}
		w.mu.Lock()
		w.visible[typeName(k.object)] = true
		w.mu.Unlock()
	}
	return nil
}

// refresh watches the kinds the caller may read now and could not when
// they were last probed, at most once per reprobeAfter.
func (w *workspaceWatch) refresh(ctx context.Context) {
	w.mu.Lock()
	due := time.Since(w.probedAt) > reprobeAfter
	w.mu.Unlock()
	if !due {
		return
	}
	kinds, err := w.probe(ctx)
	if err == nil && len(kinds) > 0 {
		err = w.watch(kinds)
	}
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Board watch not widened", "workspace", w.path, "err", err)
	}
}

type approvalAnswer struct {
	allowed bool
	at      time.Time
}

// approvalAnswerTTL is how long the board trusts the hub's answer; the
// page updates on every change, and one access review per change would be
// a request to the hub each time.
const approvalAnswerTTL = time.Minute

// mayApprove asks the hub whether the caller may update the status of
// approval requests of kind in namespace.
func (w *workspaceWatch) mayApprove(ctx context.Context, config *rest.Config, kind, namespace string) bool {
	key := kind + "/" + namespace
	w.mu.Lock()
	answer, ok := w.approvals[key]
	w.mu.Unlock()
	if ok && time.Since(answer.at) < approvalAnswerTTL {
		return answer.allowed
	}
	resource := "clusterapprovalrequests"
	if kind == kindApprovalRequest {
		resource = "approvalrequests"
	}
	allowed := false
	if kube, err := kubernetes.NewForConfig(inWorkspace(config, w.path)); err == nil {
		review, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "patch", Group: placementv1beta1.GroupVersion.Group, Resource: resource, Subresource: "status", Namespace: namespace,
			}},
		}, metav1.CreateOptions{})
		allowed = err == nil && review.Status.Allowed
	}
	w.mu.Lock()
	w.approvals[key] = approvalAnswer{allowed: allowed, at: time.Now()}
	w.mu.Unlock()
	return allowed
}

// listOnce lists one object of a kind, to learn whether the caller may
// read it, and asks again while the hub is briefly unable to answer (a
// workspace whose APIs are still being bound, a busy hub).
func listOnce(ctx context.Context, c client.Client, list client.ObjectList) error {
	var err error
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 5}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		err = c.List(ctx, list, client.Limit(1))
		transient := apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
			apierrors.IsTimeout(err) || apierrors.IsInternalError(err)
		return !transient, nil
	})
	return err
}

func typeName(o any) string { return fmt.Sprintf("%T", o) }

// sees says whether the board watches o's kind in this workspace.
func (w *workspaceWatch) sees(o client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.visible[typeName(o)]
}

// changed notes a change; subscribers hear of it once the burst settles.
func (w *workspaceWatch) changed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending {
		return
	}
	w.pending = true
	time.AfterFunc(settle, w.notify)
}

func (w *workspaceWatch) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = false
	w.version++
	for ch := range w.subscribers {
		select {
		case ch <- w.version:
		default: // the subscriber has a notice it has not read yet; one is enough
		}
	}
}

// subscribe returns a channel that receives the watch's version after each
// change, and the function that ends the subscription.
func (w *workspaceWatch) subscribe() (<-chan uint64, func()) {
	ch := make(chan uint64, 1)
	w.mu.Lock()
	w.subscribers[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.subscribers, ch)
		w.lastUsed = time.Now()
		w.mu.Unlock()
	}
}

func (w *workspaceWatch) touch() {
	w.mu.Lock()
	w.lastUsed = time.Now()
	w.mu.Unlock()
}

// idleSince says since when nobody used the watch, or false if somebody
// is subscribed.
func (w *workspaceWatch) idleSince() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastUsed, len(w.subscribers) == 0
}

// list reads a kind from the caches; a kind the board does not watch
// here reads as empty. The objects are the caches' own, not copies (1,000
// placements of 100 clusters are 100,000 statuses to copy on every
// change): the views only read them.
func (w *workspaceWatch) list(ctx context.Context, object client.Object, list client.ObjectList, opts ...client.ListOption) error {
	if !w.sees(object) {
		return nil
	}
	return w.reader.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...)
}

// watches holds the workspace watches of every session.
type watches struct {
	mu   sync.Mutex
	byID map[string]map[string]*workspaceWatch
	// starting serialises first starts per session and workspace.
	starting map[string]*sync.Mutex
}

func newWatches() *watches {
	return &watches{byID: map[string]map[string]*workspaceWatch{}, starting: map[string]*sync.Mutex{}}
}

// get returns the session's watch of the workspace at path, started on
// first use.
func (ws *watches) get(ctx context.Context, sess *session, path logicalcluster.Path) (*workspaceWatch, error) {
	key := sess.id + "\x00" + path.String()
	ws.mu.Lock()
	lock, ok := ws.starting[key]
	if !ok {
		lock = &sync.Mutex{}
		ws.starting[key] = lock
	}
	ws.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	ws.mu.Lock()
	w := ws.byID[sess.id][path.String()]
	ws.mu.Unlock()
	if w != nil {
		w.touch()
		w.refresh(ctx)
		return w, nil
	}
	w, err := startWatch(ctx, sess.config, path)
	if err != nil {
		return nil, err
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.byID[sess.id] == nil {
		ws.byID[sess.id] = map[string]*workspaceWatch{}
	}
	if started := ws.byID[sess.id][path.String()]; started != nil {
		// Started meanwhile by a request that found no lock (stopIdle had just dropped it).
		w.cancel()
		return started, nil
	}
	ws.byID[sess.id][path.String()] = w
	return w, nil
}

// closeSession stops every watch of a session that ended.
func (ws *watches) closeSession(id string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for path, w := range ws.byID[id] {
		w.cancel()
		delete(ws.starting, id+"\x00"+path)
	}
	delete(ws.byID, id)
}

// closeAll stops every watch, when the board stops.
func (ws *watches) closeAll() {
	ws.mu.Lock()
	ids := make([]string, 0, len(ws.byID))
	for id := range ws.byID {
		ids = append(ids, id)
	}
	ws.mu.Unlock()
	for _, id := range ids {
		ws.closeSession(id)
	}
}

// stopIdle stops the watches nobody has used for idle: a browser that
// moved to another workspace, or went away.
func (ws *watches) stopIdle(idle time.Duration) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for id, byPath := range ws.byID {
		for path, w := range byPath {
			if since, unused := w.idleSince(); unused && time.Since(since) > idle {
				w.cancel()
				delete(byPath, path)
				delete(ws.starting, id+"\x00"+path)
			}
		}
	}
}
