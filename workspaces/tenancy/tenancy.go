// Package tenancy decides what a workspace may do on the fleet's member
// clusters, from the ClusterGrants in the platform workspace: which clusters
// it may place onto, and on each of them whether it may place CRDs and
// adopt objects that already exist.
package tenancy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	kcptenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
	"github.com/fleetplane/fleetplane/workspaces/clients"
	"github.com/fleetplane/fleetplane/workspaces/usage"
)

// Grants reads ClusterGrants from the platform workspace (a cached reader).
type Grants struct {
	Reader client.Reader
}

// Access is what one workspace may do: the union of the grants naming it.
type Access struct {
	platform bool
	grants   []grant
	// team is the workspace the grants name, which owns this one's
	// namespaces on members: the workspace itself, or for a child
	// workspace the nearest one above it that a grant names.
	team logicalcluster.Path
	// childWorkspaces tells whether a covering grant lets the workspace
	// have child workspaces.
	childWorkspaces bool
}

type grant struct {
	name     string
	exact    bool // names the team by its path, not by a pattern
	selector labels.Selector
	spec     tenancyv1alpha1.ClusterGrantSpec
}

// For returns the access of the workspace at path.
func (g *Grants) For(ctx context.Context, path logicalcluster.Path) (*Access, error) {
	if path == tenancyv1alpha1.FleetWorkspace {
		return &Access{platform: true}, nil
	}
	// Read-only, and asked for every binding the work generator checks: the
	// cache's own objects, not copies of every grant's list of clusters.
	list := &tenancyv1alpha1.ClusterGrantList{}
	if err := g.Reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("reading ClusterGrants: %w", err)
	}
	a := &Access{}
	for _, cg := range list.Items {
		team, ok := covers(cg.Spec.Workspaces, path, cg.Spec.ChildWorkspaces)
		if !ok {
			continue
		}
		if a.team.Empty() || len(team.String()) < len(a.team.String()) {
			a.team = team
		}
		a.childWorkspaces = a.childWorkspaces || cg.Spec.ChildWorkspaces
		sel, err := selector(cg.Spec.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("ClusterGrant %s: %w", cg.Name, err)
		}
		a.grants = append(a.grants, grant{name: cg.Name, exact: slices.Contains(cg.Spec.Workspaces, team.String()), selector: sel, spec: cg.Spec})
	}
	return a, nil
}

// Platform tells whether this is the platform workspace, which is not held
// to the team rules.
func (a *Access) Platform() bool { return a.platform }

// Team is the workspace whose namespaces this one's are on members: itself,
// or the workspace a grant names above a child workspace. Empty when no
// grant covers the workspace.
func (a *Access) Team() logicalcluster.Path { return a.team }

// ChildWorkspaces tells whether the workspace may have child workspaces.
func (a *Access) ChildWorkspaces() bool { return a.platform || a.childWorkspaces }

// Granted tells whether the workspace may place onto the cluster.
func (a *Access) Granted(mc *clusterv1beta1.MemberCluster) bool {
	if a.platform {
		return true
	}
	set := labels.Set(mc.Labels)
	return slices.ContainsFunc(a.grants, func(g grant) bool { return g.selector.Matches(set) })
}

// Policy returns what the grants covering the cluster allow together: CRDs
// if one allows them, every takeover pattern, and the loosest Pod Security
// level. The caller adds the hub's reserved namespaces.
func (a *Access) Policy(mc *clusterv1beta1.MemberCluster) teampolicy.Policy {
	p := teampolicy.Policy{PodSecurity: teampolicy.DefaultPodSecurity}
	set := labels.Set(mc.Labels)
	first := true
	for _, g := range a.grants {
		if !g.selector.Matches(set) {
			continue
		}
		p.CustomResourceDefinitions = p.CustomResourceDefinitions || g.spec.AllowCustomResourceDefinitions
		for _, ns := range g.spec.TakeOverNamespaces {
			if !slices.Contains(p.TakeOverNamespaces, ns) {
				p.TakeOverNamespaces = append(p.TakeOverNamespaces, ns)
			}
		}
		level := teampolicy.Level(g.spec.PodSecurity)
		if level == "" {
			level = teampolicy.DefaultPodSecurity
		}
		if first || teampolicy.Looser(level, p.PodSecurity) {
			p.PodSecurity = level
		}
		first = false
	}
	slices.Sort(p.TakeOverNamespaces)
	return p
}

func selector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(ls)
}

// covers tells whether one of a grant's workspace patterns matches path,
// and which workspace it names: an exact path, or a prefix ending in ":*"
// for every workspace directly below it; with children, the workspaces
// below those too, at any depth.
func covers(patterns []string, path logicalcluster.Path, children bool) (logicalcluster.Path, bool) {
	p := path.String()
	for _, pattern := range patterns {
		named := pattern
		if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
			rest, below := strings.CutPrefix(p, prefix+":")
			if !below {
				continue
			}
			first, _, _ := strings.Cut(rest, ":")
			named = prefix + ":" + first
		}
		if named == p || (children && strings.HasPrefix(p, named+":")) {
			return logicalcluster.NewPath(named), true
		}
	}
	return logicalcluster.Path{}, false
}

// AdmissionRules decide, for the hub's admission, what a team may do in
// its own workspaces that RBAC cannot stop, it being their admin: create
// child workspaces, and go over its limits.
type AdmissionRules struct {
	Workspaces *clients.Factory
	// Grants are read directly: a workspace is created rarely, and must
	// see a grant created a moment before.
	Grants Grants
	// CachedGrants serve the limits, read on every write of a team.
	CachedGrants Grants
	Meter        *usage.Meter
	Defaults     Limits
}

// teamPath returns the path of the cluster's workspace when it is a team
// workspace (below root:teams).
func (r AdmissionRules) teamPath(ctx context.Context, cluster logicalcluster.Name) (logicalcluster.Path, bool, error) {
	ws, err := r.Workspaces.For(cluster)
	if err != nil {
		return logicalcluster.Path{}, false, err
	}
	path, err := ws.Path(ctx)
	if err != nil {
		return logicalcluster.Path{}, false, err
	}
	return path, strings.HasPrefix(path.String(), tenancyv1alpha1.TeamsWorkspace.String()+":"), nil
}

// MayCreateChildWorkspace implements teamadmission.Rules: anywhere outside
// the team workspaces, and inside one only where a grant covering it sets
// childWorkspaces.
func (r AdmissionRules) MayCreateChildWorkspace(ctx context.Context, cluster logicalcluster.Name) error {
	path, team, err := r.teamPath(ctx, cluster)
	if err != nil || !team {
		return err
	}
	access, err := r.Grants.For(ctx, path)
	if err != nil {
		return err
	}
	if access.ChildWorkspaces() {
		return nil
	}
	return fmt.Errorf("%s is a team workspace: it may have child workspaces only where a ClusterGrant naming it sets spec.childWorkspaces: true (ask a platform admin); a team and its child workspaces are one owner on the member clusters", path)
}

// TeamOf implements teamadmission.Rules: the team the cluster's workspace
// belongs to, its limits and what it uses, all its workspaces together;
// nil outside the team workspaces and until the hub has counted.
func (r AdmissionRules) TeamOf(ctx context.Context, cluster logicalcluster.Name) (*Team, error) {
	path, team, err := r.teamPath(ctx, cluster)
	if err != nil || !team {
		return nil, err
	}
	access, err := r.CachedGrants.For(ctx, path)
	if notStarted := new(cache.ErrCacheNotStarted); errors.As(err, &notStarted) {
		return nil, nil // the hub is starting; the limits hold once it reads the grants
	}
	if err != nil {
		return nil, err
	}
	t := &Team{Path: access.Team(), Limits: access.Limits(r.Defaults), Grants: access.grantNames()}
	if t.Path.Empty() {
		t.Path = path
	}
	if !access.ChildWorkspaces() {
		var synced bool
		if t.Used, synced = r.Meter.Of(cluster); !synced {
			return nil, nil
		}
		return t, nil
	}
	top, err := r.teamCluster(ctx, cluster, t.Path)
	if err != nil {
		return nil, err
	}
	tree := map[logicalcluster.Name]bool{}
	if err := r.subtree(ctx, top, tree); err != nil {
		return nil, err
	}
	var synced bool
	if t.Used, synced = r.Meter.Sum(func(c logicalcluster.Name) bool { return tree[c] }); !synced {
		return nil, nil
	}
	return t, nil
}

func (r AdmissionRules) teamCluster(ctx context.Context, cluster logicalcluster.Name, team logicalcluster.Path) (logicalcluster.Name, error) {
	ws, err := r.Workspaces.For(cluster)
	if err != nil {
		return "", err
	}
	return ws.Ancestor(ctx, team)
}

// subtree adds cluster and the logical clusters of every workspace below
// it to tree.
func (r AdmissionRules) subtree(ctx context.Context, cluster logicalcluster.Name, tree map[logicalcluster.Name]bool) error {
	tree[cluster] = true
	ws, err := r.Workspaces.For(cluster)
	if err != nil {
		return err
	}
	children := &kcptenancyv1alpha1.WorkspaceList{}
	err = ws.Client.List(ctx, children)
	if meta.IsNoMatchError(err) {
		return nil // a workspace being initialized serves no workspaces yet, and has none
	}
	if err != nil {
		return fmt.Errorf("listing the child workspaces of %s: %w", cluster, err)
	}
	for _, child := range children.Items {
		if c := logicalcluster.Name(child.Spec.Cluster); c != "" && !tree[c] {
			if err := r.subtree(ctx, c, tree); err != nil {
				return err
			}
		}
	}
	return nil
}
