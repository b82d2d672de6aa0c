package workapplier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/syncer/diff"
)

// maxLastAppliedSize is the largest last-applied annotation client-side apply
// writes; bigger objects are server-side applied (annotations are capped at
// 256 KiB in total).
const maxLastAppliedSize = 200 * 1024

func hashOf(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// applier writes one Work's manifests to the member cluster.
type applier struct {
	// member writes to the member cluster.
	member client.Client
	// reader reads what the placement places, from the cache or, where a
	// stale read could let a placement into what is not its own, from the
	// member's API server.
	reader memberReader
	// appliedWork is the owner reference every object this placement
	// creates carries, so that the member's garbage collector follows it.
	appliedWork metav1.OwnerReference
	owner       owner
	strategy    placementv1beta1.ApplyStrategy
	// namespacedEnvelope names the ResourceEnvelope the Work carries, if
	// any: its objects are namespaced ones only.
	namespacedEnvelope string

	// The manifests of a wave are applied concurrently; mu guards the maps.
	mu sync.Mutex
	// failedNamespaces are the Namespaces of this Work that could not be
	// applied: nothing of the Work lands in them (the namespace may be
	// another placement's).
	failedNamespaces map[string]applyOutcome
	// namespaceVerdicts are the namespaceAllowed answers of the current
	// wave: a namespace is read once per wave, not once per object in it.
	namespaceVerdicts map[string]applyOutcome
}

// startWave forgets the namespace verdicts of the previous wave: it may
// have created the namespaces.
func (a *applier) startWave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.namespaceVerdicts = map[string]applyOutcome{}
}

// apply applies one manifest: find the live object, decide whether this
// placement may manage it, and write it if it changed since last applied.
func (a *applier) apply(ctx context.Context, m *manifest) {
	mapping, err := a.member.RESTMapper().RESTMapping(m.obj.GroupVersionKind().GroupKind(), m.obj.GroupVersionKind().Version)
	if err != nil {
		m.fail(placementv1beta1.ApplyResultFailedToApply, fmt.Sprintf("the member cluster does not serve %s: %v (if a CRD in this placement defines it, it is retried once the CRD is established)", m.obj.GroupVersionKind(), err))
		return
	}
	m.gvr = mapping.Resource
	m.id.Resource = mapping.Resource.Resource
	clusterScoped := mapping.Scope.Name() == meta.RESTScopeNameRoot
	m.clusterScoped = clusterScoped
	if clusterScoped && a.namespacedEnvelope != "" {
		// The hub refuses the built-in cluster-scoped kinds; the member
		// alone knows the scope of the others.
		m.fail(placementv1beta1.ApplyResultFailedToApply, fmt.Sprintf("%s is cluster-scoped on this member cluster: %s carries namespaced objects only; put it in a ClusterResourceEnvelope",
			describe(m.obj), a.namespacedEnvelope))
		return
	}
	if clusterScoped {
		m.obj.SetNamespace("")
		m.id.Namespace = ""
	}
	if reason, msg, ok := a.owner.mayPlace(m.obj, clusterScoped); !ok {
		m.fail(reason, msg)
		return
	}
	if err := a.owner.labelNamespace(m); err != nil {
		m.fail(placementv1beta1.ApplyResultFailedToApply, fmt.Sprintf("labelling namespace %s: %v", m.obj.GetName(), err))
		return
	}
	if failed, ok := a.failedNamespace(m.obj.GetNamespace()); ok && !clusterScoped {
		m.fail(failed.reason, fmt.Sprintf("namespace %s of this placement was not applied: %s", m.obj.GetNamespace(), failed.message))
		return
	}
	if isNamespace(m.obj) {
		defer a.recordNamespace(m)
	}
	if ns := namespaceOf(m.obj); ns != "" && (!clusterScoped || isNamespace(m.obj)) {
		if reason, msg, ok := a.namespaceAllowed(ctx, ns); !ok {
			m.fail(reason, msg)
			return
		}
	}
	// A report reads the member's object: it holds to the same kinds and
	// namespaces as a write would.
	if a.strategy.Type == placementv1beta1.ApplyStrategyTypeReportDiff {
		a.reportDiff(ctx, m)
		return
	}
	// Twice at most: a create or write that lost a race with another
	// placement is judged again on what won.
	for attempt := 0; ; attempt++ {
		live, err := a.get(ctx, m.obj, attempt > 0)
		if err != nil {
			m.fail(placementv1beta1.ApplyResultFailedToFindObjInMemberCluster, fmt.Sprintf("reading %s from the member cluster: %v", describe(m.obj), err))
			return
		}
		m.live = live
		if live != nil {
			if reason, msg, ok := a.mayManage(m, live); !ok {
				m.fail(reason, msg)
				return
			}
			if a.leave(ctx, m, live) {
				return
			}
		}
		before := ""
		if live != nil {
			before = live.GetResourceVersion()
		}
		written, err := a.write(ctx, m, live)
		if err == nil {
			m.live, m.wrote = written, written.GetResourceVersion() != before
			a.logWrite(ctx, m, live)
			m.applied = applyOutcome{ok: true, reason: placementv1beta1.ApplyResultApplied, message: "the object has been applied"}
			return
		}
		// A write of an object not found may fail because it exists after
		// all, and not only with AlreadyExists: admission and quota run
		// before the existence check. It is read and judged again.
		if attempt == 0 && (apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || live == nil) {
			continue
		}
		m.fail(a.failure(m, err))
		return
	}
}

// logWrite logs a write that changed the member: a create, a takeover of
// an object the placement did not manage, or an update.
func (a *applier) logWrite(ctx context.Context, m *manifest, live *unstructured.Unstructured) {
	if !m.wrote {
		return
	}
	action := "updated"
	switch {
	case live == nil:
		action = "created"
	case !a.owner.manages(live):
		action = "took over"
	}
	log.FromContext(ctx).V(2).Info(action+" an object on the member", "object", describe(m.obj))
}

// recordNamespace remembers a Namespace of a team's Work that failed, so
// that the objects in it are not applied either: a team never writes into
// a namespace on a member that it could not make its own. A placement of
// the fleet's workspace applies them as KubeFleet does, each object held
// to the takeover rules on its own.
func (a *applier) recordNamespace(m *manifest) {
	if m.applied.ok || !a.owner.tenant() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failedNamespaces == nil {
		a.failedNamespaces = map[string]applyOutcome{}
	}
	a.failedNamespaces[m.obj.GetName()] = m.applied
}

func (a *applier) failedNamespace(name string) (applyOutcome, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	failed, ok := a.failedNamespaces[name]
	return failed, ok
}

// namespaceAllowed holds a team Work to namespaces of its own workspace,
// read from the API server once per wave: the cache may not have seen a
// namespace that another workspace just created.
func (a *applier) namespaceAllowed(ctx context.Context, name string) (string, string, bool) {
	if !a.owner.tenant() {
		return "", "", true
	}
	a.mu.Lock()
	v, ok := a.namespaceVerdicts[name]
	a.mu.Unlock()
	if ok {
		return v.reason, v.message, v.ok
	}
	reason, message, allowed := a.readNamespace(ctx, name)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.namespaceVerdicts != nil {
		a.namespaceVerdicts[name] = applyOutcome{ok: allowed, reason: reason, message: message}
	}
	return reason, message, allowed
}

func (a *applier) readNamespace(ctx context.Context, name string) (string, string, bool) {
	ns, err := a.reader.fresh(ctx, schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, client.ObjectKey{Name: name})
	if err != nil {
		return placementv1beta1.ApplyResultFailedToFindObjInMemberCluster, fmt.Sprintf("reading namespace %s from the member cluster: %v", name, err), false
	}
	return a.owner.mayUseNamespace(name, ns)
}

// write creates the object or applies the manifest over the live one.
func (a *applier) write(ctx context.Context, m *manifest, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	desired := a.desired(m, live)
	if a.strategy.Type == placementv1beta1.ApplyStrategyTypeServerSideApply {
		// Until the object is this placement's, nothing is forced: a
		// placement racing to create it then conflicts on the owner
		// annotation, which each placement applies with its own manager.
		force := live != nil && a.owner.manages(live) && a.strategy.ServerSideApplyConfig != nil && a.strategy.ServerSideApplyConfig.ForceConflicts
		// What was applied is kept as in client-side apply: drift is
		// judged against it.
		if modified, err := withLastApplied(desired); err != nil || len(modified) > maxLastAppliedSize {
			dropLastApplied(desired)
		}
		return a.serverSideApply(ctx, desired, live, force)
	}
	return a.clientSideApply(ctx, desired, live)
}

// failure names why a write failed; a server-side-apply conflict over the
// owner annotation is another placement's object.
func (a *applier) failure(m *manifest, err error) (string, string) {
	if apierrors.IsConflict(err) && strings.Contains(err.Error(), placementv1beta1.OwnerAnnotation) {
		return placementv1beta1.ApplyResultFailedToTakeOver,
			fmt.Sprintf("%s is being placed by another placement at the same time; it stays with the first — remove it from one of them", describe(m.obj))
	}
	return placementv1beta1.ApplyResultFailedToApply, fmt.Sprintf("applying %s: %v", describe(m.obj), err)
}

// get reads the live object to write over, from the API server when the
// cache is known to be behind (after a lost race). What a synced cache does
// not have is written as new: a create, or a server-side apply that only
// creates (ApplyIfAbsent), fails on an object the cache has not seen, which
// is then read and judged again.
func (a *applier) get(ctx context.Context, obj *unstructured.Unstructured, direct bool) (*unstructured.Unstructured, error) {
	key := client.ObjectKeyFromObject(obj)
	if direct {
		return a.reader.fresh(ctx, obj.GroupVersionKind(), key)
	}
	return a.reader.forCreate(ctx, obj.GroupVersionKind(), key)
}

// mayManage applies the ownership and takeover rules to an object that
// already exists: one placement manages an object, and an object no
// placement created is adopted only as the takeover rules allow.
func (a *applier) mayManage(m *manifest, live *unstructured.Unstructured) (string, string, bool) {
	if a.owner.manages(live) {
		return "", "", true
	}
	if other := live.GetAnnotations()[placementv1beta1.OwnerAnnotation]; other != "" {
		return placementv1beta1.ApplyResultFailedToTakeOver,
			fmt.Sprintf("%s is already placed by %s; two placements cannot manage the same object — remove it from one of them", describe(live), a.owner.otherPlacement(other)), false
	}
	var others []string
	for _, ref := range live.GetOwnerReferences() {
		if isAppliedWork(ref) {
			return placementv1beta1.ApplyResultFailedToTakeOver,
				fmt.Sprintf("%s is already placed by another placement; two placements cannot manage the same object — remove it from one of them", describe(live)), false
		}
		others = append(others, ref.Kind+"/"+ref.Name)
	}
	if len(others) > 0 && !a.strategy.AllowCoOwnership {
		return placementv1beta1.ApplyResultFailedToTakeOver,
			fmt.Sprintf("%s is owned by %s on the member cluster; set applyStrategy.allowCoOwnership to share it", describe(live), strings.Join(others, ", ")), false
	}
	if reason, msg, ok := a.owner.mayAdopt(live, m.clusterScoped); !ok {
		return reason, msg, false
	}
	switch a.strategy.WhenToTakeOver {
	case placementv1beta1.WhenToTakeOverTypeNever:
		return placementv1beta1.ApplyResultNotTakenOver,
			fmt.Sprintf("%s already exists on the member cluster and applyStrategy.whenToTakeOver is Never", describe(live)), false
	case placementv1beta1.WhenToTakeOverTypeIfNoDiff:
		full := a.strategy.ComparisonOption == placementv1beta1.ComparisonOptionTypeFullComparison
		if diffs := diff.Compare(m.obj, live, full); len(diffs) > 0 {
			return placementv1beta1.ApplyResultFailedToTakeOver,
				fmt.Sprintf("%s already exists on the member cluster and differs from the hub at %s (whenToTakeOver is IfNoDiff)", describe(live), paths(diffs)), false
		}
	}
	return "", "", true
}

func isAppliedWork(ref metav1.OwnerReference) bool {
	return ref.Kind == "AppliedWork" && ref.APIVersion == placementv1beta1.GroupVersion.String()
}

func paths(ds []diff.Detail) string {
	var ps []string
	for i, d := range ds {
		if i == 5 {
			ps = append(ps, fmt.Sprintf("and %d more", len(ds)-5))
			break
		}
		ps = append(ps, d.Path)
	}
	return strings.Join(ps, ", ")
}

// upToDate is true when the live object is this placement's, watched, and
// carries the hash of the very manifest it would apply: nothing to write.
func (a *applier) upToDate(live *unstructured.Unstructured, hash string) bool {
	if !a.owner.manages(live) || !placed(live) || live.GetAnnotations()[placementv1beta1.ManifestHashAnnotation] != hash {
		return false
	}
	return !a.owner.createdBy(live) || slices.ContainsFunc(live.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == a.appliedWork.UID })
}

// desired is the manifest plus the bookkeeping: the hash annotation, the
// ownership annotations and, on objects this placement creates, the owner
// reference to the AppliedWork that the member's garbage collector
// follows. An adopted object gets no such reference, so nothing but this
// syncer, acting on the placement, ever removes it (and it only releases
// it). Other owners on the live object stay.
func (a *applier) desired(m *manifest, live *unstructured.Unstructured) *unstructured.Unstructured {
	d := m.obj.DeepCopy()
	created := live == nil || a.owner.createdBy(live)
	a.owner.stamp(d, created)
	annotations := d.GetAnnotations()
	annotations[placementv1beta1.ManifestHashAnnotation] = m.hash
	d.SetAnnotations(annotations)
	var refs []metav1.OwnerReference
	if created {
		refs = append(refs, a.appliedWork)
	}
	if live != nil {
		for _, ref := range live.GetOwnerReferences() {
			// This Work's AppliedWork (or a stale earlier one) is set above.
			if !(isAppliedWork(ref) && ref.Name == a.appliedWork.Name) {
				refs = append(refs, ref)
			}
		}
	}
	d.SetOwnerReferences(refs)
	d.SetResourceVersion("")
	return d
}

func (a *applier) serverSideApply(ctx context.Context, desired, live *unstructured.Unstructured, force bool) (*unstructured.Unstructured, error) {
	desired = desired.DeepCopy()
	if live == nil {
		if err := ApplyIfAbsent(ctx, a.member, desired, a.owner.manager); err != nil {
			return nil, err
		}
		return desired, nil
	}
	desired.SetManagedFields(nil)
	// Applied over the object as read: if it changed since (a stale cache,
	// or another owner's object of the same name), the apply conflicts and
	// the object is judged again.
	desired.SetResourceVersion(live.GetResourceVersion())
	opts := []client.PatchOption{client.FieldOwner(a.owner.manager)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	if err := a.member.Patch(ctx, desired, client.Apply, opts...); err != nil {
		return nil, err
	}
	return desired, nil
}

// absentResourceVersion never matches an object's resourceVersion on a
// Kubernetes API server backed by etcd: it is the largest uint64, above
// every revision etcd can reach (an int64).
const absentResourceVersion = "18446744073709551615"

// ApplyIfAbsent server-side applies obj as fieldManager only if no object of
// its name exists: it creates obj, or fails with a Conflict and leaves the
// existing object as it was. A server-side apply is otherwise a create or an
// update, whichever the server finds, so an object created on the member
// after it was read as absent would be written over and taken for the
// placement's own. The API server creates an object that does not exist
// whatever resourceVersion an apply names, and applies to one that exists
// only if its resourceVersion matches, which absentResourceVersion never
// does. On success obj is the object as applied.
func ApplyIfAbsent(ctx context.Context, c client.Client, obj *unstructured.Unstructured, fieldManager string) error {
	obj.SetManagedFields(nil)
	obj.SetResourceVersion(absentResourceVersion)
	return c.Patch(ctx, obj, client.Apply, client.FieldOwner(fieldManager))
}

// clientSideApply does what `kubectl apply` does: a three-way merge between
// the last applied manifest (kept in an annotation), the new one and the
// live object, so that fields others set on the member are kept while fields
// removed from the manifest are removed.
func (a *applier) clientSideApply(ctx context.Context, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	desired = desired.DeepCopy()
	modified, err := withLastApplied(desired)
	if err != nil {
		return nil, err
	}
	if len(modified) > maxLastAppliedSize {
		// Too big for an annotation: server-side apply owns the fields
		// instead.
		dropLastApplied(desired)
		return a.serverSideApply(ctx, desired, live, live != nil && a.owner.manages(live))
	}
	if live == nil {
		// Create fails if the object appeared meanwhile; it is then judged
		// again as an existing object.
		if err := a.member.Create(ctx, desired, client.FieldOwner(a.owner.manager)); err != nil {
			return nil, err
		}
		return desired, nil
	}
	original := []byte(live.GetAnnotations()[placementv1beta1.LastAppliedConfigAnnotation])
	current, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	patchType, patch, err := threeWayPatch(desired, original, modified, current)
	if err != nil {
		return nil, err
	}
	if string(patch) == "{}" {
		return live, nil
	}
	// The patch holds the resourceVersion it was computed from: if another
	// placement wrote the object meanwhile, it fails with a conflict and the
	// object is judged again.
	patch, err = withResourceVersion(patch, live.GetResourceVersion())
	if err != nil {
		return nil, err
	}
	if err := a.member.Patch(ctx, live, client.RawPatch(patchType, patch), client.FieldOwner(a.owner.manager)); err != nil {
		return nil, err
	}
	return live, nil
}

// withResourceVersion makes a merge patch conditional on the object's
// resourceVersion.
func withResourceVersion(patch []byte, rv string) ([]byte, error) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	md, _ := p["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = rv
	p["metadata"] = md
	return json.Marshal(p)
}

// withLastApplied records the object itself in its last-applied annotation
// and returns its JSON.
func withLastApplied(obj *unstructured.Unstructured) ([]byte, error) {
	dropLastApplied(obj)
	lastApplied, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	annotations := obj.GetAnnotations()
	annotations[placementv1beta1.LastAppliedConfigAnnotation] = string(lastApplied)
	obj.SetAnnotations(annotations)
	return json.Marshal(obj.Object)
}

func dropLastApplied(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	delete(annotations, placementv1beta1.LastAppliedConfigAnnotation)
	obj.SetAnnotations(annotations)
}

// threeWayPatch uses a strategic merge patch for built-in kinds (so lists
// such as containers merge by name) and a JSON merge patch for the rest.
func threeWayPatch(obj *unstructured.Unstructured, original, modified, current []byte) (types.PatchType, []byte, error) {
	typed, err := clientgoscheme.Scheme.New(obj.GroupVersionKind())
	if err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return "", nil, err
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		return types.StrategicMergePatchType, patch, err
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
	return types.MergePatchType, patch, err
}

func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", obj.GetKind(), ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
}

// ownerRef points the objects a placement creates at their AppliedWork. It
// never blocks the owner's deletion: removing a placement must not hang on
// the member.
func ownerRef(aw *placementv1beta1.AppliedWork) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         placementv1beta1.GroupVersion.String(),
		Kind:               "AppliedWork",
		Name:               aw.Name,
		UID:                aw.UID,
		BlockOwnerDeletion: ptr.To(false),
	}
}
