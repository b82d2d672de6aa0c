package override

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// kind is what differs between ClusterResourceOverrides and
// ResourceOverrides for the snapshot controller.
type kind interface {
	// name is the override kind, for messages.
	name() string
	newOverride() client.Object
	// siblings lists the overrides a resource may be selected by only one
	// of: the workspace's ClusterResourceOverrides, or the namespace's
	// ResourceOverrides.
	siblings(ctx context.Context, c client.Reader, o client.Object) ([]client.Object, error)
	spec(o client.Object) any
	policy(o client.Object) *placementv1beta1.OverridePolicy
	// selected names the resources the override selects.
	selected(o client.Object) []string
	snapshots(ctx context.Context, c client.Reader, o client.Object) ([]client.Object, error)
	newSnapshot(o client.Object, meta metav1.ObjectMeta, hash []byte) client.Object
	snapshotHash(s client.Object) []byte
}

type clusterKind struct{}

func (clusterKind) name() string { return "ClusterResourceOverride" }

func (clusterKind) newOverride() client.Object { return &placementv1beta1.ClusterResourceOverride{} }

func (clusterKind) siblings(ctx context.Context, c client.Reader, _ client.Object) ([]client.Object, error) {
	list := &placementv1beta1.ClusterResourceOverrideList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	return objects(list.Items), nil
}

func (clusterKind) spec(o client.Object) any {
	return o.(*placementv1beta1.ClusterResourceOverride).Spec
}

func (clusterKind) policy(o client.Object) *placementv1beta1.OverridePolicy {
	return o.(*placementv1beta1.ClusterResourceOverride).Spec.Policy
}

func (clusterKind) selected(o client.Object) []string {
	var out []string
	for _, s := range o.(*placementv1beta1.ClusterResourceOverride).Spec.ClusterResourceSelectors {
		out = append(out, describe(s.Group, s.Version, s.Kind, s.Name))
	}
	return out
}

func (clusterKind) snapshots(ctx context.Context, c client.Reader, o client.Object) ([]client.Object, error) {
	list := &placementv1beta1.ClusterResourceOverrideSnapshotList{}
	if err := c.List(ctx, list, client.MatchingLabels{placementv1beta1.OverrideTrackingLabel: o.GetName()}); err != nil {
		return nil, err
	}
	return objects(list.Items), nil
}

func (clusterKind) newSnapshot(o client.Object, meta metav1.ObjectMeta, hash []byte) client.Object {
	return &placementv1beta1.ClusterResourceOverrideSnapshot{ObjectMeta: meta, Spec: placementv1beta1.ClusterResourceOverrideSnapshotSpec{
		OverrideSpec: o.(*placementv1beta1.ClusterResourceOverride).Spec, OverrideHash: hash,
	}}
}

func (clusterKind) snapshotHash(s client.Object) []byte {
	return s.(*placementv1beta1.ClusterResourceOverrideSnapshot).Spec.OverrideHash
}

type namespacedKind struct{}

func (namespacedKind) name() string { return "ResourceOverride" }

func (namespacedKind) newOverride() client.Object { return &placementv1beta1.ResourceOverride{} }

func (namespacedKind) siblings(ctx context.Context, c client.Reader, o client.Object) ([]client.Object, error) {
	list := &placementv1beta1.ResourceOverrideList{}
	if err := c.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil, err
	}
	return objects(list.Items), nil
}

func (namespacedKind) spec(o client.Object) any { return o.(*placementv1beta1.ResourceOverride).Spec }

func (namespacedKind) policy(o client.Object) *placementv1beta1.OverridePolicy {
	return o.(*placementv1beta1.ResourceOverride).Spec.Policy
}

func (namespacedKind) selected(o client.Object) []string {
	var out []string
	for _, s := range o.(*placementv1beta1.ResourceOverride).Spec.ResourceSelectors {
		out = append(out, describe(s.Group, s.Version, s.Kind, s.Name))
	}
	return out
}

func (namespacedKind) snapshots(ctx context.Context, c client.Reader, o client.Object) ([]client.Object, error) {
	list := &placementv1beta1.ResourceOverrideSnapshotList{}
	if err := c.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{placementv1beta1.OverrideTrackingLabel: o.GetName()}); err != nil {
		return nil, err
	}
	return objects(list.Items), nil
}

func (namespacedKind) newSnapshot(o client.Object, meta metav1.ObjectMeta, hash []byte) client.Object {
	return &placementv1beta1.ResourceOverrideSnapshot{ObjectMeta: meta, Spec: placementv1beta1.ResourceOverrideSnapshotSpec{
		OverrideSpec: o.(*placementv1beta1.ResourceOverride).Spec, OverrideHash: hash,
	}}
}

func (namespacedKind) snapshotHash(s client.Object) []byte {
	return s.(*placementv1beta1.ResourceOverrideSnapshot).Spec.OverrideHash
}

// describe names a selected resource, e.g. "apps/v1 Deployment web".
func describe(group, version, kind, name string) string {
	return fmt.Sprintf("%s %s %s", schema.GroupVersion{Group: group, Version: version}, kind, name)
}

// objects turns a list's items into client objects.
func objects[T any, PT interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}
