package workapplier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	member   client.Client
	owner    metav1.OwnerReference
	strategy placementv1beta1.ApplyStrategy
}

// apply applies one manifest: find the live object, decide whether we may
// own it, and write it if it changed since we last applied it.
func (a *applier) apply(ctx context.Context, m *manifest) {
	mapping, err := a.member.RESTMapper().RESTMapping(m.obj.GroupVersionKind().GroupKind(), m.obj.GroupVersionKind().Version)
	if err != nil {
		m.fail(placementv1beta1.ApplyResultFailedToApply, fmt.Sprintf("the member cluster does not serve %s: %v (if a CRD in this placement defines it, it is retried once the CRD is established)", m.obj.GroupVersionKind(), err))
		return
	}
	m.gvr = mapping.Resource
	m.id.Resource = mapping.Resource.Resource
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		m.obj.SetNamespace("")
		m.id.Namespace = ""
	}

	live, err := a.get(ctx, m.obj)
	if err != nil {
		m.fail(placementv1beta1.ApplyResultFailedToFindObjInMemberCluster, fmt.Sprintf("reading %s from the member cluster: %v", describe(m.obj), err))
		return
	}
	if live != nil {
		if reason, msg, ok := a.mayOwn(m, live); !ok {
			m.fail(reason, msg)
			m.live = live
			return
		}
		if upToDate(live, m.hash, a.owner.UID) {
			m.live = live
			m.applied = applyOutcome{ok: true, reason: placementv1beta1.ApplyResultApplied, message: "the object is up to date"}
			return
		}
	}

	desired := a.desired(m, live)
	if a.strategy.Type == placementv1beta1.ApplyStrategyTypeServerSideApply {
		live, err = a.serverSideApply(ctx, desired)
	} else {
		live, err = a.clientSideApply(ctx, desired, live)
	}
	if err != nil {
		m.fail(placementv1beta1.ApplyResultFailedToApply, fmt.Sprintf("applying %s: %v", describe(m.obj), err))
		return
	}
	m.live = live
	m.applied = applyOutcome{ok: true, reason: placementv1beta1.ApplyResultApplied, message: "the object has been applied"}
}

func (a *applier) get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := a.member.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// mayOwn applies the takeover rules to an object that already exists.
func (a *applier) mayOwn(m *manifest, live *unstructured.Unstructured) (string, string, bool) {
	ours, others := false, []string{}
	for _, ref := range live.GetOwnerReferences() {
		switch {
		case ref.UID == a.owner.UID:
			ours = true
		case ref.Kind == "AppliedWork" && ref.APIVersion == placementv1beta1.GroupVersion.String():
			return placementv1beta1.ApplyResultApplyConflictBetweenPlacements,
				fmt.Sprintf("%s is already placed by another placement (Work %s); two placements cannot manage the same object — remove it from one of them", describe(live), ref.Name), false
		default:
			others = append(others, ref.Kind+"/"+ref.Name)
		}
	}
	if ours {
		return "", "", true
	}
	if len(others) > 0 && !a.strategy.AllowCoOwnership {
		return placementv1beta1.ApplyResultManifestsAlreadyOwnedByOthers,
			fmt.Sprintf("%s is owned by %s on the member cluster; set applyStrategy.allowCoOwnership to share it", describe(live), strings.Join(others, ", ")), false
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

// upToDate is true when the live object carries our ownership and the hash
// of the very manifest we would apply: nothing to write.
func upToDate(live *unstructured.Unstructured, hash string, owner types.UID) bool {
	if live.GetAnnotations()[placementv1beta1.ManifestHashAnnotation] != hash {
		return false
	}
	for _, ref := range live.GetOwnerReferences() {
		if ref.UID == owner {
			return true
		}
	}
	return false
}

// desired is the manifest plus our bookkeeping: the hash annotation and the
// owner reference to the AppliedWork (which the member's garbage collector
// follows when the Work goes away). Other owners on the live object stay.
func (a *applier) desired(m *manifest, live *unstructured.Unstructured) *unstructured.Unstructured {
	d := m.obj.DeepCopy()
	annotations := d.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[placementv1beta1.ManifestHashAnnotation] = m.hash
	d.SetAnnotations(annotations)
	refs := []metav1.OwnerReference{a.owner}
	if live != nil {
		for _, ref := range live.GetOwnerReferences() {
			if ref.UID != a.owner.UID {
				refs = append(refs, ref)
			}
		}
	}
	d.SetOwnerReferences(refs)
	d.SetResourceVersion("")
	return d
}

func (a *applier) serverSideApply(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	desired = desired.DeepCopy()
	desired.SetManagedFields(nil)
	opts := []client.PatchOption{client.FieldOwner(placementv1beta1.WorkFieldManagerName)}
	if cfg := a.strategy.ServerSideApplyConfig; cfg != nil && cfg.ForceConflicts {
		opts = append(opts, client.ForceOwnership)
	}
	if err := a.member.Patch(ctx, desired, client.Apply, opts...); err != nil {
		return nil, err
	}
	return desired, nil
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
		// Too big for an annotation: server-side apply owns the fields instead.
		dropLastApplied(desired)
		force := a.strategy
		force.ServerSideApplyConfig = &placementv1beta1.ServerSideApplyConfig{ForceConflicts: true}
		fallback := &applier{member: a.member, owner: a.owner, strategy: force}
		return fallback.serverSideApply(ctx, desired)
	}
	if live == nil {
		if err := a.member.Create(ctx, desired); err != nil {
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
	if err := a.member.Patch(ctx, live, client.RawPatch(patchType, patch)); err != nil {
		return nil, err
	}
	return live, nil
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

// ownerRef points applied objects at their AppliedWork. It never blocks the
// owner's deletion: removing a placement must not hang on the member.
func ownerRef(aw *placementv1beta1.AppliedWork) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         placementv1beta1.GroupVersion.String(),
		Kind:               "AppliedWork",
		Name:               aw.Name,
		UID:                aw.UID,
		BlockOwnerDeletion: ptr.To(false),
	}
}
