package rollout

import (
	"context"
	"fmt"

	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/envelopes"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
)

// ApplicableOverrides decides, per target cluster of the bindings, which
// override snapshots apply to a resource snapshot there; fleet reads the
// clusters' labels. A workspace without overrides costs two cached lists.
func ApplicableOverrides(ctx context.Context, fleet, c client.Reader, k placements.Key, snapshot placementv1beta1.ResourceSnapshotObj,
	bindings []placementv1beta1.BindingObj) (map[string]overrides.Applicable, error) {
	set, err := overrides.Latest(ctx, c)
	if err != nil || set.Empty() {
		return nil, err
	}
	group, err := placements.ResourceSnapshotGroup(ctx, c, k, snapshot.GetName())
	if err != nil {
		return nil, err
	}
	ids, err := placedResources(group)
	if err != nil {
		return nil, err
	}
	m := set.ForPlacement(k, ids)
	if m.Empty() {
		return nil, nil
	}
	out := map[string]overrides.Applicable{}
	for _, b := range bindings {
		name := b.GetBindingSpec().TargetCluster
		if _, done := out[name]; done {
			continue
		}
		mc := &clusterv1beta1.MemberCluster{}
		if err := fleet.Get(ctx, client.ObjectKey{Name: name}, mc); client.IgnoreNotFound(err) != nil {
			return nil, err
		} else if apierrors.IsNotFound(err) {
			// The binding goes with its cluster; no rule can select it.
			continue
		}
		out[name] = m.On(mc.Labels)
	}
	return out, nil
}

// placedResources identifies what a snapshot group places: its resources,
// and the objects of its envelopes in place of the envelopes, which
// overrides select as any other object. A malformed envelope is left to the
// work generator, which reports it on the binding.
func placedResources(group []placementv1beta1.ResourceSnapshotObj) ([]placementv1beta1.ResourceIdentifier, error) {
	var ids []placementv1beta1.ResourceIdentifier
	for _, s := range group {
		for _, res := range s.GetResourceSnapshotSpec().SelectedResources {
			objs := [][]byte{res.Raw}
			if env, err := envelopes.Open(res.Raw); err == nil && env != nil {
				objs = env.Objects
			}
			for _, raw := range objs {
				id, err := overrides.Identify(raw)
				if err != nil {
					return nil, fmt.Errorf("resource snapshot %s holds an undecodable object: %w", s.GetName(), err)
				}
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// overridden maps an override snapshot to the placements of its workspace
// it may concern: the one it references, or all of this controller's kind.
func (r *Reconciler) overridden() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(clusterName string, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []mcreconcile.Request {
			ref, ns := referencedPlacement(o)
			request := func(namespace, name string) mcreconcile.Request {
				return mcreconcile.Request{ClusterName: clusterName, Request: reconcile.Request{NamespacedName: r.Key(namespace, name).NamespacedName()}}
			}
			if ref != nil {
				if (ref.Scope == placementv1beta1.NamespaceScoped) != r.Namespaced {
					return nil
				}
				return []mcreconcile.Request{request(ns, ref.Name)}
			}
			list := r.Sample().NewList()
			opts := []client.ListOption{}
			if r.Namespaced {
				opts = append(opts, client.InNamespace(ns))
			}
			if err := cl.GetCache().List(ctx, list, opts...); err != nil {
				log.FromContext(ctx).Error(err, "listing the placements an override may apply to; they are not rolled out again for it", "workspace", clusterName, "override", client.ObjectKeyFromObject(o))
				return nil
			}
			var out []mcreconcile.Request
			for _, p := range list.GetPlacementObjs() {
				out = append(out, request(p.GetNamespace(), p.GetName()))
			}
			return out
		})
	}
}

// relabelled enqueues, when a member cluster's labels change, the placements
// of the workspaces that hold overrides: override rules select clusters by
// label. Member clusters are relabelled rarely; the lists are of the
// wildcard caches.
func (r *Reconciler) relabelled() mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request] {
	return func(string, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcreconcile.Request {
			withOverrides := map[logicalcluster.Name]bool{}
			for _, list := range []client.ObjectList{&placementv1beta1.ClusterResourceOverrideSnapshotList{}, &placementv1beta1.ResourceOverrideSnapshotList{}} {
				if err := placements.ListEverywhere(ctx, r.Manager, list); err != nil {
					log.FromContext(ctx).Error(err, "listing override snapshots after a member cluster was relabelled; overrides follow the labels on the placements' next change")
					return nil
				}
				_ = meta.EachListItem(list, func(o runtime.Object) error {
					withOverrides[logicalcluster.From(o.(client.Object))] = true
					return nil
				})
			}
			if len(withOverrides) == 0 {
				return nil
			}
			list := r.Sample().NewList()
			if err := placements.ListEverywhere(ctx, r.Manager, list); err != nil {
				log.FromContext(ctx).Error(err, "listing placements after a member cluster was relabelled; overrides follow the labels on the placements' next change")
				return nil
			}
			var out []mcreconcile.Request
			for _, p := range list.GetPlacementObjs() {
				if withOverrides[logicalcluster.From(p)] {
					out = append(out, placements.RequestFor(p))
				}
			}
			return out
		})
	}
}

// referencedPlacement reads an override snapshot's placement reference and
// namespace.
func referencedPlacement(o client.Object) (*placementv1beta1.PlacementRef, string) {
	switch s := o.(type) {
	case *placementv1beta1.ClusterResourceOverrideSnapshot:
		return s.Spec.OverrideSpec.Placement, ""
	case *placementv1beta1.ResourceOverrideSnapshot:
		return s.Spec.OverrideSpec.Placement, s.Namespace
	}
	return nil, ""
}
