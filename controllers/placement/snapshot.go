package placement

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

// snapshotShardLimit is the soft limit of the objects' size in one resource
// snapshot; larger selections are split over several objects.
const snapshotShardLimit = 800 * 1024

// snapshotShardObjects bounds the objects in one shard, because each shard
// becomes a Work per cluster whose status reports every manifest (about
// 450 bytes each): spec and status share the hub's 1.5 MiB object limit,
// and the member's AppliedWork lists them all too.
const snapshotShardObjects = 500

// maxObjectBytes is the largest object that can be placed: it is stored
// whole in one resource snapshot and one Work, and the hub's etcd refuses
// writes over 1.5 MiB; the rest is left for their metadata.
const maxObjectBytes = 1536*1024 - 16*1024

const defaultRevisionHistoryLimit = 10

// encode serializes the selected objects and their hash.
func encode(objs []*unstructured.Unstructured) ([][]byte, string, error) {
	raws := make([][]byte, 0, len(objs))
	h := sha256.New()
	for _, o := range objs {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return nil, "", err
		}
		if len(raw) > maxObjectBytes {
			return nil, "", invalid("%s %s is %d KiB, too large to place: an object is stored whole in a resource snapshot and a Work on the hub, and may be at most %d KiB; make it smaller or leave it out of the resource selectors",
				o.GetKind(), objectName(o), (len(raw)+1023)/1024, maxObjectBytes/1024)
		}
		raws = append(raws, raw)
		h.Write(raw)
	}
	return raws, hex.EncodeToString(h.Sum(nil)), nil
}

// objectName is namespace/name, or name for a cluster-scoped object.
func objectName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// shard splits the objects into groups of at most snapshotShardLimit bytes
// (an object larger than that gets a shard of its own) and
// snapshotShardObjects objects.
func shard(raws [][]byte) [][][]byte {
	var out [][][]byte
	var cur [][]byte
	size := 0
	for _, r := range raws {
		if len(cur) > 0 && (size+len(r) > snapshotShardLimit || len(cur) == snapshotShardObjects) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, r)
		size += len(r)
	}
	return append(out, cur)
}

// ensureResourceSnapshot makes the newest resource snapshot group hold the
// given selection: unchanged content keeps the latest group, anything else
// creates the next index. It returns the latest master snapshot.
func (r *Reconciler) ensureResourceSnapshot(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, objs []*unstructured.Unstructured) (placementv1beta1.ResourceSnapshotObj, error) {
	k := placements.KeyOf(p)
	raws, hash, err := encode(objs)
	if err != nil {
		return nil, err
	}
	latest, err := placements.LatestResourceSnapshot(ctx, c, k)
	if err != nil {
		return nil, err
	}
	next := 0
	if latest != nil {
		if latest.GetAnnotations()[placementv1beta1.ResourceGroupHashAnnotation] == hash {
			return latest, nil
		}
		idx, err := placements.Index(latest, placementv1beta1.ResourceIndexLabel)
		if err != nil {
			return nil, err
		}
		next = idx + 1
	}

	shards := shard(raws)
	// Shards first, the master last: a reader that sees the master can rely
	// on every shard it announces.
	for sub := 1; sub < len(shards); sub++ {
		s := r.newResourceSnapshot(p, placementv1beta1.ResourceSnapshotShardName(p.GetName(), next, sub), next, shards[sub])
		s.GetAnnotations()[placementv1beta1.SubindexOfResourceSnapshotAnnotation] = strconv.Itoa(sub)
		if err := createOwned(ctx, c, p, s); err != nil {
			return nil, err
		}
	}
	master := r.newResourceSnapshot(p, placementv1beta1.ResourceSnapshotName(p.GetName(), next), next, shards[0])
	master.GetLabels()[placementv1beta1.IsLatestSnapshotLabel] = "true"
	ann := master.GetAnnotations()
	ann[placementv1beta1.ResourceGroupHashAnnotation] = hash
	ann[placementv1beta1.NumberOfResourceSnapshotsAnnotation] = strconv.Itoa(len(shards))
	ann[placementv1beta1.NumberOfEnvelopedObjectsAnnotation] = strconv.Itoa(countEnvelopes(objs))
	if err := createOwned(ctx, c, p, master); err != nil {
		return nil, err
	}
	if latest != nil {
		if err := markNotLatest(ctx, c, latest); err != nil {
			return nil, err
		}
	}
	return master, r.trimResourceSnapshots(ctx, c, p, next)
}

func (r *Reconciler) newResourceSnapshot(p placementv1beta1.PlacementObj, name string, index int, raws [][]byte) placementv1beta1.ResourceSnapshotObj {
	s := placements.KeyOf(p).NewResourceSnapshot()
	s.SetName(name)
	s.SetLabels(map[string]string{
		placementv1beta1.PlacementTrackingLabel: p.GetName(),
		placementv1beta1.ResourceIndexLabel:     strconv.Itoa(index),
	})
	s.SetAnnotations(map[string]string{})
	spec := placementv1beta1.ResourceSnapshotSpec{SelectedResources: make([]placementv1beta1.ResourceContent, 0, len(raws))}
	for _, raw := range raws {
		spec.SelectedResources = append(spec.SelectedResources, placementv1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	s.SetResourceSnapshotSpec(spec)
	return s
}

func countEnvelopes(objs []*unstructured.Unstructured) int {
	n := 0
	for _, o := range objs {
		if o.GroupVersionKind().Group == placementv1beta1.GroupVersion.Group {
			n++
		}
	}
	return n
}

// createOwned creates an object owned by the placement, so that kcp's
// garbage collector removes it with the placement; an existing object of the
// same name (a retry after a partial failure) is fine.
func createOwned(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, o client.Object) error {
	if err := controllerutil.SetControllerReference(p, o, c.Scheme()); err != nil {
		return err
	}
	if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating %s: %w", o.GetName(), err)
	}
	return nil
}

func markNotLatest(ctx context.Context, c client.Client, o client.Object) error {
	patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
	labels := o.GetLabels()
	labels[placementv1beta1.IsLatestSnapshotLabel] = "false"
	o.SetLabels(labels)
	return client.IgnoreNotFound(c.Patch(ctx, o, patch))
}

func revisionHistoryLimit(p placementv1beta1.PlacementObj) int {
	if l := p.GetPlacementSpec().RevisionHistoryLimit; l != nil && *l > 0 {
		return int(*l)
	}
	return defaultRevisionHistoryLimit
}

// trimResourceSnapshots deletes snapshot groups older than the history limit.
func (r *Reconciler) trimResourceSnapshots(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, newest int) error {
	snaps, err := placements.ResourceSnapshots(ctx, c, placements.KeyOf(p), nil)
	if err != nil {
		return err
	}
	return trim(ctx, c, snaps, placementv1beta1.ResourceIndexLabel, newest-revisionHistoryLimit(p))
}

// trim deletes the objects whose index is at most oldest.
func trim[T client.Object](ctx context.Context, c client.Client, objs []T, indexLabel string, oldest int) error {
	for _, o := range objs {
		if idx, err := placements.Index(o, indexLabel); err == nil && idx <= oldest {
			if err := client.IgnoreNotFound(c.Delete(ctx, o)); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshotPolicy is the policy as the scheduler sees it: PickAll when
// unset, and without numberOfClusters, which scales a PickN placement without
// a new snapshot (the count is an annotation).
func snapshotPolicy(p placementv1beta1.PlacementObj) (*placementv1beta1.PlacementPolicy, []byte, error) {
	policy := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType}
	if spec := p.GetPlacementSpec().Policy; spec != nil {
		policy = spec.DeepCopy()
		if policy.PlacementType == "" {
			policy.PlacementType = placementv1beta1.PickAllPlacementType
		}
	}
	policy.NumberOfClusters = nil
	raw, err := json.Marshal(policy)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(raw)
	return policy, sum[:], nil
}

func numberOfClusters(p placementv1beta1.PlacementObj) (string, bool) {
	policy := p.GetPlacementSpec().Policy
	switch {
	case policy == nil:
		return "", false
	case policy.PlacementType == placementv1beta1.PickNPlacementType && policy.NumberOfClusters != nil:
		return strconv.Itoa(int(*policy.NumberOfClusters)), true
	case policy.PlacementType == placementv1beta1.PickFixedPlacementType:
		return strconv.Itoa(len(policy.ClusterNames)), true
	}
	return "", false
}

// ensurePolicySnapshot keeps the latest policy snapshot in line with the
// placement: a changed policy creates the next index; a changed PickN count
// or generation only updates the latest snapshot's annotations.
func (r *Reconciler) ensurePolicySnapshot(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj) (placementv1beta1.PolicySnapshotObj, error) {
	k := placements.KeyOf(p)
	policy, hash, err := snapshotPolicy(p)
	if err != nil {
		return nil, err
	}
	latest, err := placements.LatestPolicySnapshot(ctx, c, k)
	if err != nil {
		return nil, err
	}
	count, hasCount := numberOfClusters(p)
	generation := strconv.FormatInt(p.GetGeneration(), 10)
	next := 0
	if latest != nil {
		if bytes.Equal(latest.GetPolicySnapshotSpec().PolicyHash, hash) {
			return latest, r.updatePolicyAnnotations(ctx, c, latest, count, hasCount, generation)
		}
		idx, err := placements.Index(latest, placementv1beta1.PolicyIndexLabel)
		if err != nil {
			return nil, err
		}
		next = idx + 1
	}
	s := k.NewPolicySnapshot()
	s.SetName(placementv1beta1.PolicySnapshotName(p.GetName(), next))
	s.SetLabels(map[string]string{
		placementv1beta1.PlacementTrackingLabel: p.GetName(),
		placementv1beta1.PolicyIndexLabel:       strconv.Itoa(next),
		placementv1beta1.IsLatestSnapshotLabel:  "true",
	})
	ann := map[string]string{placementv1beta1.CRPGenerationAnnotation: generation}
	if hasCount {
		ann[placementv1beta1.NumberOfClustersAnnotation] = count
	}
	s.SetAnnotations(ann)
	s.SetPolicySnapshotSpec(placementv1beta1.SchedulingPolicySnapshotSpec{Policy: policy, PolicyHash: hash})
	if err := createOwned(ctx, c, p, s); err != nil {
		return nil, err
	}
	if latest != nil {
		if err := markNotLatest(ctx, c, latest); err != nil {
			return nil, err
		}
	}
	return s, r.trimPolicySnapshots(ctx, c, p, next)
}

func (r *Reconciler) updatePolicyAnnotations(ctx context.Context, c client.Client, s placementv1beta1.PolicySnapshotObj, count string, hasCount bool, generation string) error {
	ann := s.GetAnnotations()
	if ann[placementv1beta1.CRPGenerationAnnotation] == generation && (!hasCount || ann[placementv1beta1.NumberOfClustersAnnotation] == count) {
		return nil
	}
	patch := client.MergeFrom(s.DeepCopyObject().(client.Object))
	if ann == nil {
		ann = map[string]string{}
	}
	ann[placementv1beta1.CRPGenerationAnnotation] = generation
	if hasCount {
		ann[placementv1beta1.NumberOfClustersAnnotation] = count
	}
	s.SetAnnotations(ann)
	return c.Patch(ctx, s, patch)
}

func (r *Reconciler) trimPolicySnapshots(ctx context.Context, c client.Client, p placementv1beta1.PlacementObj, newest int) error {
	snaps, err := placements.PolicySnapshots(ctx, c, placements.KeyOf(p), nil)
	if err != nil {
		return err
	}
	return trim(ctx, c, snaps, placementv1beta1.PolicyIndexLabel, newest-revisionHistoryLimit(p))
}

// selectedResources lists the objects for the placement's status.
func selectedResources(objs []*unstructured.Unstructured) []placementv1beta1.ResourceIdentifier {
	out := make([]placementv1beta1.ResourceIdentifier, 0, len(objs))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		out = append(out, placementv1beta1.ResourceIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	sortSelected(out)
	return out
}
