package workgenerator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
)

// trusted is what the work generator may write Work from, once it is sure
// the hub's own controllers made the binding: Work reaches member clusters,
// so a binding or snapshot written by anyone else (which kcp's maximal
// permission policy already forbids) must never produce one.
type trusted struct {
	group []placementv1beta1.ResourceSnapshotObj
	path  logicalcluster.Path
	// tenant is set for team workspaces, which the syncer holds to
	// namespace ownership and the grants' permissions.
	tenant bool
	perms  tenancy.Permissions
	// deleteStrategy is the placement's, recorded on its Works.
	deleteStrategy placementv1beta1.DeletePropagationPolicy
	// cluster is what overrides may read of the target cluster.
	cluster overrides.Cluster
}

// annotate tells the member's syncer where a Work comes from and what it
// may do.
func (t trusted) annotate(w *placementv1beta1.Work) {
	add := map[string]string{
		placementv1beta1.WorkspacePathAnnotation:           t.path.String(),
		placementv1beta1.PlacementDeleteStrategyAnnotation: string(t.deleteStrategy),
	}
	if t.tenant {
		add[placementv1beta1.TenantAnnotation] = "true"
		add[placementv1beta1.TakeOverNamespacesAnnotation] = strings.Join(t.perms.TakeOverNamespaces, ",")
	}
	w.Annotations = merged(w.Annotations, add)
}

// trust checks the binding, its placement, its snapshots and its cluster.
func (r *Reconciler) trust(ctx context.Context, c client.Client, o origin) (trusted, error) {
	k := placements.Key{Namespace: o.binding.GetNamespace(), Name: o.placement()}
	// Read only: the placement is the cache's own.
	p, err := placements.Peek(ctx, c, k)
	if client.IgnoreNotFound(err) != nil {
		return trusted{}, err
	}
	if apierrors.IsNotFound(err) {
		p = nil
	}
	group, err := placements.ResourceSnapshotGroup(ctx, c, k, o.binding.GetBindingSpec().ResourceSnapshotName)
	if err != nil {
		return trusted{}, fmt.Errorf("reading resource snapshot %s: %w", o.binding.GetBindingSpec().ResourceSnapshotName, err)
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := r.Fleet.Get(ctx, client.ObjectKey{Name: o.binding.GetBindingSpec().TargetCluster}, mc); client.IgnoreNotFound(err) != nil {
		return trusted{}, err
	} else if err != nil {
		mc = nil
	}
	ws, err := r.Workspaces.For(o.workspace)
	if err != nil {
		return trusted{}, err
	}
	path, err := ws.Path(ctx)
	if err != nil {
		return trusted{}, err
	}
	access, err := (&tenancy.Grants{Reader: r.Fleet}).For(ctx, path)
	if err != nil {
		return trusted{}, err
	}
	if err := verifyOrigin(p, o.binding, group, mc, access.Granted); err != nil {
		return trusted{}, err
	}
	t := trusted{group: group, path: path, tenant: !access.Platform(), deleteStrategy: deleteStrategyOf(p),
		cluster: overrides.Cluster{Name: mc.Name, Labels: mc.Labels}}
	if t.tenant {
		t.perms = access.Permissions(mc)
	}
	return t, nil
}

// verifyOrigin checks that a binding was made by the scheduler for an
// existing placement (its controller), that every snapshot it rolls out
// belongs to that placement, and that its cluster exists and is granted to
// the workspace. p and mc are nil when they do not exist.
func verifyOrigin(p placementv1beta1.PlacementObj, b placementv1beta1.BindingObj, group []placementv1beta1.ResourceSnapshotObj,
	mc *clusterv1beta1.MemberCluster, granted func(*clusterv1beta1.MemberCluster) bool) error {
	placement := b.GetLabels()[placementv1beta1.PlacementTrackingLabel]
	if p == nil {
		return fmt.Errorf("refusing binding %s: its placement %s does not exist", b.GetName(), placement)
	}
	if !controlledBy(b, p) {
		return fmt.Errorf("refusing binding %s: it was not made by the scheduler for placement %s", b.GetName(), placement)
	}
	for _, s := range group {
		if !controlledBy(s, p) {
			return fmt.Errorf("refusing binding %s: resource snapshot %s does not belong to placement %s", b.GetName(), s.GetName(), placement)
		}
	}
	cluster := b.GetBindingSpec().TargetCluster
	if mc == nil {
		return fmt.Errorf("refusing binding %s: member cluster %s does not exist", b.GetName(), cluster)
	}
	if !granted(mc) {
		return fmt.Errorf("refusing binding %s: member cluster %s is not granted to this workspace", b.GetName(), cluster)
	}
	return nil
}

func controlledBy(o metav1.Object, p placementv1beta1.PlacementObj) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == p.GetUID() && ref.Name == p.GetName()
}

// checkPermissions refuses CustomResourceDefinitions, in the Works of a
// team workspace, that no grant covering the cluster allows them: a CRD is
// shared by every tenant of the member. Envelopes are open by then.
func checkPermissions(works []*placementv1beta1.Work, perms tenancy.Permissions, cluster string) error {
	if perms.CustomResourceDefinitions {
		return nil
	}
	for _, w := range works {
		for _, m := range w.Spec.Workload.Manifests {
			// Decoding every object on every sync would cost more than the
			// Work itself; only a CRD names its own kind.
			if !bytes.Contains(m.Raw, []byte(`"CustomResourceDefinition"`)) {
				continue
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(m.Raw, &head); err != nil {
				return fmt.Errorf("Work %s holds an undecodable object: %w", w.Name, err)
			}
			if head.Kind == "CustomResourceDefinition" && strings.HasPrefix(head.APIVersion, "apiextensions.k8s.io/") {
				return fmt.Errorf("CustomResourceDefinition %s cannot be placed on member cluster %s: no ClusterGrant covering it allows this workspace to place CRDs (a platform admin can set spec.allowCustomResourceDefinitions on one, or place the CRD from root:fleet)", head.Metadata.Name, cluster)
			}
		}
	}
	return nil
}

func deleteStrategyOf(p placementv1beta1.PlacementObj) placementv1beta1.DeletePropagationPolicy {
	if ds := p.GetPlacementSpec().Strategy.DeleteStrategy; ds != nil && ds.PropagationPolicy != "" {
		return ds.PropagationPolicy
	}
	return placementv1beta1.DeletePropagationPolicyDelete
}
