// Package clients gives hub controllers privileged access to any workspace
// by logical cluster name: placements select arbitrary resources (any kind,
// including the workspace's own CRDs), which an APIExport view cannot show.
package clients

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	"github.com/kcp-dev/kcp/sdk/apis/core"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Workspace is a set of clients for one logical cluster.
type Workspace struct {
	Name      logicalcluster.Name
	Client    client.Client
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Mapper    meta.ResettableRESTMapper

	config  *rest.Config
	factory *Factory
	pathMu  sync.Mutex
	path    logicalcluster.Path

	resourcesMu sync.Mutex
	// namespaced is the kept NamespacedResources; zero when not known.
	namespaced unique.Handle[string]
	// resourcesForgotten counts forgetResources calls: a discovery that
	// began before one is not kept.
	resourcesForgotten uint64

	recorderMu  sync.Mutex
	broadcaster record.EventBroadcaster
	// stopBroadcaster cancels the running broadcaster's context.
	stopBroadcaster context.CancelFunc
	recorders       map[string]record.EventRecorder
	idle            *time.Timer
	// lastActive is when an event was last recorded or written (unix ns).
	lastActive atomic.Int64
	// forgotten is set once the workspace went away: a reconcile still
	// holding it records nothing more.
	forgotten bool
	events    typedcorev1.EventsGetter

	cachedMu     sync.Mutex
	cachedFrom   cluster.Cluster
	cachedClient client.Client
}

// CachedClient returns a client that reads from the cache of view (the
// workspace as an APIExport's virtual workspace shows it to the manager)
// and writes straight to the workspace. A write through the virtual
// workspace costs kcp three requests (the view's own, then a read and the
// write it forwards to the workspace); straight to the workspace it is one.
// The objects and their resource versions are the same either way. Reads
// wait until the cache has synced (SyncedReader); kinds are mapped by the
// workspace's own mapper, which maps the placement kinds as Fleetplane
// serves them, whatever the workspace adds (the view's mapper would
// discover them again, per workspace).
func (w *Workspace) CachedClient(view cluster.Cluster) (client.Client, error) {
	w.cachedMu.Lock()
	defer w.cachedMu.Unlock()
	if w.cachedFrom == view {
		return w.cachedClient, nil
	}
	c, err := client.New(w.config, client.Options{Scheme: w.factory.scheme, Mapper: w.Mapper,
		Cache: &client.CacheOptions{Reader: SyncedReader(view.GetCache())}})
	if err != nil {
		return nil, err
	}
	w.cachedFrom, w.cachedClient = view, c
	return c, nil
}

// Factory hands out (and caches) clients per logical cluster.
type Factory struct {
	base   *rest.Config
	scheme *runtime.Scheme
	// otherShards, on a hub of several shards, reads the workspaces above
	// this shard's: a workspace's parent may be on another shard.
	otherShards *Factory

	mu    sync.Mutex
	cache map[logicalcluster.Name]*Workspace
}

// NewFactory builds clients from a privileged config for the kcp base URL.
func NewFactory(base *rest.Config, scheme *runtime.Scheme) *Factory {
	return &Factory{base: rest.CopyConfig(base), scheme: scheme, cache: map[logicalcluster.Name]*Workspace{}}
}

// WithOtherShards makes f resolve its workspaces' paths through others, a
// factory that reaches every shard (at the front-proxy), where a workspace
// above is not on f's shard; it returns f.
func (f *Factory) WithOtherShards(others *Factory) *Factory {
	f.otherShards = others
	return f
}

// hereOrOnOtherShards reads with f, and where that fails (what it reads is
// on another shard) with f's other shards, if it has them.
func hereOrOnOtherShards[T any](f *Factory, read func(*Factory) (T, error)) (T, error) {
	v, err := read(f)
	if err != nil && f.otherShards != nil {
		return read(f.otherShards)
	}
	return v, err
}

// workspaceAbove reads the Workspace name in parent, on any shard.
func (f *Factory) workspaceAbove(ctx context.Context, parent logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	return hereOrOnOtherShards(f, func(g *Factory) (*tenancyv1alpha1.Workspace, error) { return g.workspaceIn(ctx, parent, name) })
}

// pathAbove is the path of a workspace above one of f's, on any shard.
func (f *Factory) pathAbove(ctx context.Context, name logicalcluster.Name) (logicalcluster.Path, error) {
	return hereOrOnOtherShards(f, func(g *Factory) (logicalcluster.Path, error) { return g.pathOf(ctx, name) })
}

// For returns the clients of a logical cluster.
func (f *Factory) For(name logicalcluster.Name) (*Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w, ok := f.cache[name]; ok {
		return w, nil
	}
	cfg := rest.CopyConfig(f.base)
	cfg.Host += name.Path().RequestPath()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	mapper := NewLazyMapper(dc)
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: f.scheme, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	events, err := typedcorev1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	w := &Workspace{Name: name, Client: c, Dynamic: dyn, Discovery: dc, Mapper: mapper, config: cfg, events: events, factory: f}
	f.cache[name] = w
	return w, nil
}

// Forget drops the clients of a logical cluster that went away, and stops
// recording events there.
func (f *Factory) Forget(name logicalcluster.Name) {
	f.mu.Lock()
	w, ok := f.cache[name]
	delete(f.cache, name)
	f.mu.Unlock()
	if !ok {
		return
	}
	w.recorderMu.Lock()
	defer w.recorderMu.Unlock()
	w.forgotten = true
	w.stopRecording()
}

// APIsChanged drops what is cached of a logical cluster's API discovery,
// after CRDs there changed.
func (f *Factory) APIsChanged(name logicalcluster.Name) {
	f.mu.Lock()
	w, ok := f.cache[name]
	f.mu.Unlock()
	if ok {
		w.forgetResources()
		w.Mapper.Reset()
	}
}

// Recorder records events of component in the workspace, where its users
// see them. The workspace's components share one broadcaster, started at the
// first event and stopped after recorderIdle without one written: a broadcaster
// holds ~100 KB (queues of 1,000 events), and most team workspaces are
// quiet most of the time.
func (w *Workspace) Recorder(scheme *runtime.Scheme, component string) record.EventRecorder {
	return &recorder{w: w, scheme: scheme, component: component}
}

// recorderIdle is how long a workspace's broadcaster outlives its last
// event. Events repeated after a longer pause are recorded anew rather than
// counted on the earlier one.
const recorderIdle = 2 * time.Minute

// liveRecorder returns the recorder of component on the workspace's running
// broadcaster, starting it if needed; nil once the workspace went away.
func (w *Workspace) liveRecorder(scheme *runtime.Scheme, component string) record.EventRecorder {
	w.recorderMu.Lock()
	defer w.recorderMu.Unlock()
	if w.forgotten {
		return nil
	}
	if w.broadcaster == nil {
		// Stopped by cancelling its context first: a watcher of a
		// broadcaster shut down with its context still live spins on its
		// closed channel until the context ends (client-go's
		// StartEventWatcher), which took 2% of the hub's CPU while 500 team
		// workspaces' broadcasters went idle.
		ctx, cancel := context.WithCancel(context.Background())
		w.broadcaster, w.stopBroadcaster = record.NewBroadcaster(record.WithContext(ctx)), cancel
		w.broadcaster.StartRecordingToSink(activeSink{EventSink: &typedcorev1.EventSinkImpl{Interface: w.events.Events("")}, w: w})
		w.recorders = map[string]record.EventRecorder{}
		w.idle = time.AfterFunc(recorderIdle, w.stopIdleRecording)
	}
	w.touch()
	if _, ok := w.recorders[component]; !ok {
		w.recorders[component] = w.broadcaster.NewRecorder(scheme, corev1.EventSource{Component: component})
	}
	return w.recorders[component]
}

func (w *Workspace) stopIdleRecording() {
	w.recorderMu.Lock()
	defer w.recorderMu.Unlock()
	if w.broadcaster == nil {
		return
	}
	if wait := recorderIdle - time.Since(time.Unix(0, w.lastActive.Load())); wait > 0 {
		w.idle.Reset(wait)
		return
	}
	w.stopRecording()
}

// stopRecording shuts the broadcaster down; the caller holds recorderMu.
func (w *Workspace) stopRecording() {
	if w.broadcaster == nil {
		return
	}
	w.idle.Stop()
	w.stopBroadcaster()
	w.broadcaster.Shutdown()
	w.broadcaster, w.stopBroadcaster, w.recorders, w.idle = nil, nil, nil, nil
}

func (w *Workspace) touch() { w.lastActive.Store(time.Now().UnixNano()) }

// activeSink notes when each write of an event ends: a broadcaster still
// writing (a burst at the events client's rate limit, retries against a
// failing server) is not idle.
type activeSink struct {
	record.EventSink
	w *Workspace
}

func (s activeSink) Create(e *corev1.Event) (*corev1.Event, error) {
	defer s.w.touch()
	return s.EventSink.Create(e)
}

func (s activeSink) Update(e *corev1.Event) (*corev1.Event, error) {
	defer s.w.touch()
	return s.EventSink.Update(e)
}

func (s activeSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	defer s.w.touch()
	return s.EventSink.Patch(e, data)
}

// recorder records through whichever broadcaster of its workspace is
// running when an event comes.
type recorder struct {
	w         *Workspace
	scheme    *runtime.Scheme
	component string
}

func (r *recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.AnnotatedEventf(object, nil, eventtype, reason, "%s", message)
}

func (r *recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.AnnotatedEventf(object, nil, eventtype, reason, messageFmt, args...)
}

func (r *recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	if live := r.w.liveRecorder(r.scheme, r.component); live != nil {
		live.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
	}
}

// Path returns the workspace's human-readable path, e.g. root:teams:team-a,
// as kcp itself records it. The kcp.io/path annotation on the workspace's
// LogicalCluster is not trusted: the workspace's admins may edit it, and
// grants are keyed on paths. Instead the path is followed up the tree, each
// step confirmed by the parent's Workspace object, whose spec.cluster only
// kcp may set. Paths never change, so it is resolved once.
func (w *Workspace) Path(ctx context.Context) (logicalcluster.Path, error) {
	w.pathMu.Lock()
	defer w.pathMu.Unlock()
	if !w.path.Empty() {
		return w.path, nil
	}
	path, err := resolvePath(ctx, w.Name, w.logicalCluster, w.factory.workspaceAbove, w.factory.pathAbove)
	if err != nil {
		return logicalcluster.Path{}, fmt.Errorf("resolving the path of workspace %s: %w", w.Name, err)
	}
	w.path = path
	return path, nil
}

// Ancestor returns the logical cluster of the workspace at path, which is
// this workspace or one above it (a team above its child workspace). Each
// step up is the owner that resolving the path confirmed.
func (w *Workspace) Ancestor(ctx context.Context, path logicalcluster.Path) (logicalcluster.Name, error) {
	own, err := w.Path(ctx)
	if err != nil {
		return "", err
	}
	if own == path {
		return w.Name, nil
	}
	if !strings.HasPrefix(own.String(), path.String()+":") {
		return "", fmt.Errorf("workspace %s is not below %s", own, path)
	}
	lc, err := w.logicalCluster(ctx)
	if err != nil {
		return "", err
	}
	parent, err := w.factory.For(logicalcluster.Name(lc.Spec.Owner.Cluster))
	if err != nil {
		return "", err
	}
	return parent.Ancestor(ctx, path)
}

func (w *Workspace) logicalCluster(ctx context.Context) (*corev1alpha1.LogicalCluster, error) {
	lc := &corev1alpha1.LogicalCluster{}
	return lc, w.Client.Get(ctx, client.ObjectKey{Name: corev1alpha1.LogicalClusterName}, lc)
}

// workspaceIn reads the Workspace object name in the logical cluster parent.
func (f *Factory) workspaceIn(ctx context.Context, parent logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	pw, err := f.For(parent)
	if err != nil {
		return nil, err
	}
	ws := &tenancyv1alpha1.Workspace{}
	return ws, pw.Client.Get(ctx, client.ObjectKey{Name: name}, ws)
}

func (f *Factory) pathOf(ctx context.Context, name logicalcluster.Name) (logicalcluster.Path, error) {
	w, err := f.For(name)
	if err != nil {
		return logicalcluster.Path{}, err
	}
	return w.Path(ctx)
}

// resolvePath derives a logical cluster's path from its owner: the Workspace
// that the LogicalCluster names as owner must really point at it, and the
// path is the owner's parent path plus the Workspace's name.
func resolvePath(ctx context.Context, name logicalcluster.Name,
	logicalCluster func(context.Context) (*corev1alpha1.LogicalCluster, error),
	workspaceIn func(context.Context, logicalcluster.Name, string) (*tenancyv1alpha1.Workspace, error),
	pathOf func(context.Context, logicalcluster.Name) (logicalcluster.Path, error),
) (logicalcluster.Path, error) {
	if name == core.RootCluster {
		return core.RootCluster.Path(), nil
	}
	lc, err := logicalCluster(ctx)
	if err != nil {
		return logicalcluster.Path{}, err
	}
	owner := lc.Spec.Owner
	if owner == nil || owner.Resource != "workspaces" || owner.Cluster == "" || owner.Name == "" {
		return logicalcluster.Path{}, fmt.Errorf("its LogicalCluster names no owning Workspace")
	}
	parent := logicalcluster.Name(owner.Cluster)
	ws, err := workspaceIn(ctx, parent, owner.Name)
	if err != nil {
		return logicalcluster.Path{}, fmt.Errorf("reading its Workspace %s in %s: %w", owner.Name, parent, err)
	}
	if ws.Spec.Cluster != name.String() {
		return logicalcluster.Path{}, fmt.Errorf("Workspace %s in %s is logical cluster %q, not this one", owner.Name, parent, ws.Spec.Cluster)
	}
	parentPath, err := pathOf(ctx, parent)
	if err != nil {
		return logicalcluster.Path{}, err
	}
	return parentPath.Join(owner.Name), nil
}
