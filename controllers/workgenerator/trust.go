package workgenerator

import (
	"context"
	"fmt"
	"maps"

	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
)

// trusted is what the work generator may write Work from, once it is sure
// the hub's own controllers made the binding: Work reaches member clusters,
// so a binding or snapshot written by anyone else (which kcp's maximal
// permission policy already forbids) must never produce one.
type trusted struct {
	group []placementv1beta1.ResourceSnapshotObj
	path  logicalcluster.Path
	// policy is set for team workspaces: what their grants allow on the
	// cluster. The hub holds every manifest to it, and so does the syncer.
	policy *teampolicy.Policy
	// team owns the workspace's namespaces on members: the workspace
	// itself, or the one above a child workspace that its grants name.
	team     logicalcluster.Name
	teamPath logicalcluster.Path
	// deleteStrategy is the placement's, recorded on its Works.
	deleteStrategy placementv1beta1.DeletePropagationPolicy
	// reportBack is the placement's reportBackStrategy, which its Works
	// carry to the syncer.
	reportBack *placementv1beta1.ReportBackStrategy
	// cluster is what overrides may read of the target cluster.
	cluster overrides.Cluster
}

// annotate tells the member's syncer where a Work comes from, what it may
// do, and whether to mirror statuses back.
func (t trusted) annotate(w *placementv1beta1.Work) {
	w.Spec.ReportBackStrategy = t.reportBack.DeepCopy()
	add := map[string]string{
		placementv1beta1.WorkspacePathAnnotation:           t.path.String(),
		placementv1beta1.PlacementDeleteStrategyAnnotation: string(t.deleteStrategy),
	}
	if t.policy != nil {
		maps.Copy(add, t.policy.Annotations())
		add[placementv1beta1.TeamAnnotation] = t.team.String()
		add[placementv1beta1.TeamPathAnnotation] = t.teamPath.String()
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
	t := trusted{group: group, path: path, deleteStrategy: deleteStrategyOf(p), reportBack: reportBackOf(p),
		cluster: overrides.Cluster{Name: mc.Name, Labels: mc.Labels}}
	if !access.Platform() {
		policy := access.Policy(mc)
		policy.ReservedNamespaces = r.TeamReservedNamespaces
		t.policy = &policy
		t.teamPath = access.Team()
		if t.team, err = ws.Ancestor(ctx, t.teamPath); err != nil {
			return trusted{}, fmt.Errorf("finding team workspace %s: %w", t.teamPath, err)
		}
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

func deleteStrategyOf(p placementv1beta1.PlacementObj) placementv1beta1.DeletePropagationPolicy {
	if ds := p.GetPlacementSpec().Strategy.DeleteStrategy; ds != nil && ds.PropagationPolicy != "" {
		return ds.PropagationPolicy
	}
	return placementv1beta1.DeletePropagationPolicyDelete
}

// reportBackOf is the placement's reportBackStrategy, nil when it mirrors
// nothing.
func reportBackOf(p placementv1beta1.PlacementObj) *placementv1beta1.ReportBackStrategy {
	rb := p.GetPlacementSpec().Strategy.ReportBackStrategy
	if rb.MirrorDestination() == "" {
		return nil
	}
	return rb
}
