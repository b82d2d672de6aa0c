// Package placements holds what every placement controller needs to treat
// ClusterResourcePlacements and ResourcePlacements alike: the object kinds
// that belong to each, lookups of their snapshots (by label) and bindings
// (by index), and the binding writes a cache does not show yet.
package placements

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// Key identifies a placement inside its workspace; Namespace is empty for a
// ClusterResourcePlacement.
type Key struct {
	Namespace, Name string
}

// KeyOf returns the key of a placement object.
func KeyOf(p client.Object) Key { return Key{Namespace: p.GetNamespace(), Name: p.GetName()} }

// Cluster reports whether the key is a ClusterResourcePlacement's.
func (k Key) Cluster() bool { return k.Namespace == "" }

// NamespacedName converts the key for client calls.
func (k Key) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
}

func (k Key) String() string {
	if k.Cluster() {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// New returns an empty placement object of the key's kind.
func (k Key) New() placementv1beta1.PlacementObj {
	if k.Cluster() {
		return &placementv1beta1.ClusterResourcePlacement{}
	}
	return &placementv1beta1.ResourcePlacement{}
}

// NewList returns an empty list of placements of the key's kind.
func (k Key) NewList() placementv1beta1.PlacementListObj {
	if k.Cluster() {
		return &placementv1beta1.ClusterResourcePlacementList{}
	}
	return &placementv1beta1.ResourcePlacementList{}
}

// Get reads the placement.
func Get(ctx context.Context, c client.Reader, k Key) (placementv1beta1.PlacementObj, error) {
	p := k.New()
	return p, c.Get(ctx, k.NamespacedName(), p)
}

// Peek reads the placement from a cache without copying it: the object is
// the cache's own; read it, never change it. (A placement of 100 clusters
// carries 150 KB of status, and the work generator reads the placement for
// each of its bindings: 6% of a restarted hub's CPU went into the copies.)
// c must read a cache with PlacementNameIndex.
func Peek(ctx context.Context, c client.Reader, k Key) (placementv1beta1.PlacementObj, error) {
	list := k.NewList()
	opts := []client.ListOption{client.UnsafeDisableDeepCopy, client.MatchingFields{PlacementNameIndex: k.Name}}
	if !k.Cluster() {
		opts = append(opts, client.InNamespace(k.Namespace))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	for _, p := range list.GetPlacementObjs() {
		if p.GetName() == k.Name {
			return p, nil
		}
	}
	resource := "resourceplacements"
	if k.Cluster() {
		resource = "clusterresourceplacements"
	}
	return nil, apierrors.NewNotFound(placementv1beta1.GroupVersion.WithResource(resource).GroupResource(), k.Name)
}

// ownedBy selects the objects of a placement by its tracking label, in its
// namespace for a ResourcePlacement.
func ownedBy(k Key, extra map[string]string) []client.ListOption {
	labels := client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: k.Name}
	for l, v := range extra {
		labels[l] = v
	}
	opts := []client.ListOption{labels}
	if !k.Cluster() {
		opts = append(opts, client.InNamespace(k.Namespace))
	}
	return opts
}

// NewResourceSnapshot returns an empty resource snapshot of the key's kind.
func (k Key) NewResourceSnapshot() placementv1beta1.ResourceSnapshotObj {
	if k.Cluster() {
		return &placementv1beta1.ClusterResourceSnapshot{}
	}
	return &placementv1beta1.ResourceSnapshot{ObjectMeta: objectMeta(k)}
}

// NewPolicySnapshot returns an empty policy snapshot of the key's kind.
func (k Key) NewPolicySnapshot() placementv1beta1.PolicySnapshotObj {
	if k.Cluster() {
		return &placementv1beta1.ClusterSchedulingPolicySnapshot{}
	}
	return &placementv1beta1.SchedulingPolicySnapshot{ObjectMeta: objectMeta(k)}
}

// NewBinding returns an empty binding of the key's kind.
func (k Key) NewBinding() placementv1beta1.BindingObj {
	if k.Cluster() {
		return &placementv1beta1.ClusterResourceBinding{}
	}
	return &placementv1beta1.ResourceBinding{ObjectMeta: objectMeta(k)}
}

// ResourceSnapshots lists the placement's resource snapshots (masters and
// shards); with extra labels, only those matching.
func ResourceSnapshots(ctx context.Context, c client.Reader, k Key, extra map[string]string) ([]placementv1beta1.ResourceSnapshotObj, error) {
	var list placementv1beta1.ResourceSnapshotListObj = &placementv1beta1.ResourceSnapshotList{}
	if k.Cluster() {
		list = &placementv1beta1.ClusterResourceSnapshotList{}
	}
	if err := c.List(ctx, list, ownedBy(k, extra)...); err != nil {
		return nil, err
	}
	return list.GetResourceSnapshotObjs(), nil
}

// PolicySnapshots lists the placement's policy snapshots.
func PolicySnapshots(ctx context.Context, c client.Reader, k Key, extra map[string]string) ([]placementv1beta1.PolicySnapshotObj, error) {
	var list placementv1beta1.PolicySnapshotListObj = &placementv1beta1.SchedulingPolicySnapshotList{}
	if k.Cluster() {
		list = &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	}
	if err := c.List(ctx, list, ownedBy(k, extra)...); err != nil {
		return nil, err
	}
	return list.GetPolicySnapshotObjs(), nil
}

// BindingPlacementIndex indexes bindings by the name of their placement
// (AddIndexes): a placement has one binding per cluster, a workspace a
// hundred placements, and a label selector reads every binding of the
// workspace to find one placement's.
const BindingPlacementIndex = "placement"

// PlacementNameIndex indexes placements by name (AddIndexes), for Peek: a
// cache hands out its own object only from a list, and without the index
// that list held every placement of the workspace, for each binding
// checked. The API server knows the field too.
const PlacementNameIndex = "metadata.name"

// AddIndexes adds BindingPlacementIndex to the caches of bindings and
// PlacementNameIndex to those of placements, of both kinds. It is called
// before the caches start.
func AddIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	byPlacement := func(o client.Object) []string {
		if name := o.GetLabels()[placementv1beta1.PlacementTrackingLabel]; name != "" {
			return []string{name}
		}
		return nil
	}
	byName := func(o client.Object) []string { return []string{o.GetName()} }
	for _, i := range []struct {
		obj     client.Object
		field   string
		extract client.IndexerFunc
	}{
		{&placementv1beta1.ClusterResourceBinding{}, BindingPlacementIndex, byPlacement},
		{&placementv1beta1.ResourceBinding{}, BindingPlacementIndex, byPlacement},
		{&placementv1beta1.ClusterResourcePlacement{}, PlacementNameIndex, byName},
		{&placementv1beta1.ResourcePlacement{}, PlacementNameIndex, byName},
	} {
		if err := indexer.IndexField(ctx, i.obj, i.field, i.extract); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", i.obj, i.field, err)
		}
	}
	return nil
}

// Bindings lists the placement's bindings, with extra list options if any,
// from a cache with BindingPlacementIndex.
func Bindings(ctx context.Context, c client.Reader, k Key, extra ...client.ListOption) ([]placementv1beta1.BindingObj, error) {
	opts := []client.ListOption{client.MatchingFields{BindingPlacementIndex: k.Name}}
	if !k.Cluster() {
		opts = append(opts, client.InNamespace(k.Namespace))
	}
	return listBindings(ctx, c, k, append(opts, extra...))
}

// BindingsFromServer lists the placement's bindings from the API server,
// which knows no BindingPlacementIndex.
func BindingsFromServer(ctx context.Context, c client.Reader, k Key) ([]placementv1beta1.BindingObj, error) {
	return listBindings(ctx, c, k, ownedBy(k, nil))
}

func listBindings(ctx context.Context, c client.Reader, k Key, opts []client.ListOption) ([]placementv1beta1.BindingObj, error) {
	var list placementv1beta1.BindingListObj = &placementv1beta1.ResourceBindingList{}
	if k.Cluster() {
		list = &placementv1beta1.ClusterResourceBindingList{}
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	return list.GetBindingObjs(), nil
}

var latest = map[string]string{placementv1beta1.IsLatestSnapshotLabel: "true"}

// LatestResourceSnapshot returns the master snapshot of the newest resource
// snapshot group, or nil if there is none yet.
func LatestResourceSnapshot(ctx context.Context, c client.Reader, k Key) (placementv1beta1.ResourceSnapshotObj, error) {
	snaps, err := ResourceSnapshots(ctx, c, k, latest)
	if err != nil || len(snaps) == 0 {
		return nil, err
	}
	return newestByIndex(snaps, placementv1beta1.ResourceIndexLabel), nil
}

// LatestPolicySnapshot returns the newest policy snapshot, or nil.
func LatestPolicySnapshot(ctx context.Context, c client.Reader, k Key) (placementv1beta1.PolicySnapshotObj, error) {
	snaps, err := PolicySnapshots(ctx, c, k, latest)
	if err != nil || len(snaps) == 0 {
		return nil, err
	}
	return newestByIndex(snaps, placementv1beta1.PolicyIndexLabel), nil
}

// newestByIndex picks the highest index; normally only one object carries
// the latest label, but a crash between two writes can leave two.
func newestByIndex[T client.Object](objs []T, label string) T {
	best, bestIdx := objs[0], -1
	for _, o := range objs {
		if i, err := Index(o, label); err == nil && i > bestIdx {
			best, bestIdx = o, i
		}
	}
	return best
}

// Index reads an index label.
func Index(o client.Object, label string) (int, error) {
	v, ok := o.GetLabels()[label]
	if !ok {
		return 0, fmt.Errorf("%s has no %s label", o.GetName(), label)
	}
	return strconv.Atoi(v)
}

func objectMeta(k Key) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: k.Namespace} }

// RolloutStartedMessage is a binding's RolloutStarted message once it is
// bound to its resource snapshot; it names the update run that bound it,
// if one did.
func RolloutStartedMessage(b placementv1beta1.BindingObj) string {
	msg := fmt.Sprintf("Detected the new changes on the resources and started the rollout process, resourceSnapshotName: %s", b.GetBindingSpec().ResourceSnapshotName)
	if kind, name, ok := strings.Cut(b.GetAnnotations()[placementv1beta1.UpdateRunAnnotation], "/"); ok {
		msg += fmt.Sprintf(", %s%s: %s", strings.ToLower(kind[:1]), kind[1:], name)
	}
	return msg
}

// ConflictRetry is when a reconcile whose write met a newer version of the
// object runs again, unless that version's own event brings it back first.
// A conflict only means the cache was behind: retried with the error
// backoff, the conflicts of a rollout to 100 clusters added up to seconds.
const ConflictRetry = 100 * time.Millisecond

// RetryConflict turns a conflict into a prompt retry; other errors stay.
func RetryConflict(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: ConflictRetry}, nil
	}
	return reconcile.Result{}, err
}

// ParallelWrites is how many independent writes of one reconcile (a
// placement's new bindings, its bindings' rollout) are in flight at once.
const ParallelWrites = 16

// wildcard is implemented by workspace providers with a cache over all
// workspaces.
type wildcard interface {
	GetWildcard() cache.Cache
}

// ListEverywhere lists objects of every workspace, for the rare event (a
// grant or a member cluster changed) that concerns all of them. The objects
// are the cache's own, not copies: read them, never change them. (A
// restarted hub maps each of 1,000 member clusters' first events this way:
// copying 1,000 placements of 100 clusters for each was half of its CPU.)
func ListEverywhere(ctx context.Context, mgr mcmanager.Manager, list client.ObjectList) error {
	w, ok := mgr.GetProvider().(wildcard)
	if !ok {
		return fmt.Errorf("the workspace provider %T has no cache over all workspaces", mgr.GetProvider())
	}
	return w.GetWildcard().List(ctx, list, client.UnsafeDisableDeepCopy)
}

// RequestFor is the request of a workspace-aware controller for an object
// of any workspace.
func RequestFor(o client.Object) mcreconcile.Request {
	return mcreconcile.Request{ClusterName: logicalcluster.From(o).String(), Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// ResourceSnapshotGroup returns a master snapshot and its shards, in
// subindex order.
func ResourceSnapshotGroup(ctx context.Context, c client.Reader, k Key, masterName string) ([]placementv1beta1.ResourceSnapshotObj, error) {
	master := k.NewResourceSnapshot()
	if err := c.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: masterName}, master); err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(master.GetAnnotations()[placementv1beta1.NumberOfResourceSnapshotsAnnotation])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("resource snapshot %s has no valid %s annotation", masterName, placementv1beta1.NumberOfResourceSnapshotsAnnotation)
	}
	group := []placementv1beta1.ResourceSnapshotObj{master}
	if n == 1 {
		return group, nil
	}
	all, err := ResourceSnapshots(ctx, c, k, map[string]string{placementv1beta1.ResourceIndexLabel: master.GetLabels()[placementv1beta1.ResourceIndexLabel]})
	if err != nil {
		return nil, err
	}
	shards := make([]placementv1beta1.ResourceSnapshotObj, n)
	shards[0] = master
	for _, s := range all {
		sub, err := strconv.Atoi(s.GetAnnotations()[placementv1beta1.SubindexOfResourceSnapshotAnnotation])
		if err == nil && sub > 0 && sub < n {
			shards[sub] = s
		}
	}
	for i, s := range shards {
		if s == nil {
			return nil, fmt.Errorf("resource snapshot %s is missing shard %d of %d", masterName, i, n)
		}
	}
	return shards, nil
}

// Scope says which kind of placement a controller serves: one controller
// instance runs for ClusterResourcePlacements and one for ResourcePlacements.
type Scope struct {
	// Namespaced selects ResourcePlacements.
	Namespaced bool
}

// Key returns the key of a placement of this scope.
func (s Scope) Key(namespace, name string) Key {
	if !s.Namespaced {
		namespace = ""
	}
	return Key{Namespace: namespace, Name: name}
}

// Sample is a key of this scope, for building empty objects of its kinds.
func (s Scope) Sample() Key { return s.Key("sample", "sample") }

// Name names a controller of this scope, e.g. "fleet-rollout-crp".
func (s Scope) Name(controller string) string {
	if s.Namespaced {
		return controller + "-rp"
	}
	return controller + "-crp"
}

// ToPlacement maps a snapshot or binding to its placement by tracking label.
func ToPlacement(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[placementv1beta1.PlacementTrackingLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// Lookup resolves a request of a workspace-aware controller: the client of
// the placement's workspace (reading from the manager's cache, writing
// straight to the workspace: see clients.Workspace.CachedClient) and the
// placement, or a nil placement if it is gone.
func (s Scope) Lookup(ctx context.Context, mgr mcmanager.Manager, workspaces *clients.Factory, req mcreconcile.Request) (client.Client, placementv1beta1.PlacementObj, error) {
	c, err := WorkspaceClient(ctx, mgr, workspaces, req.ClusterName)
	if err != nil {
		return nil, nil, IgnoreWorkspaceGone(err)
	}
	p, err := Get(ctx, c, s.Key(req.Namespace, req.Name))
	if err != nil {
		return c, nil, client.IgnoreNotFound(err)
	}
	return c, p, nil
}

// IgnoreWorkspaceGone treats a request of a workspace the manager no
// longer engages (deleted, or no longer binding the placement APIs) as
// done: retrying it would never succeed. A workspace's placements are
// cleaned up before it goes (their finalizers hold its deletion).
func IgnoreWorkspaceGone(err error) error {
	if errors.Is(err, multicluster.ErrClusterNotFound) {
		return nil
	}
	return err
}

// WorkspaceClient is the client of a workspace the manager engaged: reads
// from the manager's cache, writes straight to the workspace.
func WorkspaceClient(ctx context.Context, mgr mcmanager.Manager, workspaces *clients.Factory, clusterName string) (client.Client, error) {
	cl, err := mgr.GetCluster(ctx, clusterName)
	if err != nil {
		return nil, err
	}
	ws, err := workspaces.For(logicalcluster.Name(clusterName))
	if err != nil {
		return nil, err
	}
	c, err := ws.CachedClient(cl)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Decisions logs, at V(2), what a controller decided about placement k of
// a workspace: clusters picked or dropped, rollout steps, bindings
// removed. Each line names the workspace by its path and the placement, so
// that one placement can be followed through the hub's logs
// (docs/operations.md).
func Decisions(ctx context.Context, workspaces *clients.Factory, clusterName string, k Key) logr.Logger {
	logger := log.FromContext(ctx).V(2)
	if !logger.Enabled() {
		return logger
	}
	workspace := clusterName
	if ws, err := workspaces.For(logicalcluster.Name(clusterName)); err == nil {
		if path, err := ws.Path(ctx); err == nil {
			workspace = path.String()
		}
	}
	return logger.WithValues("workspace", workspace, "placement", k.String())
}
