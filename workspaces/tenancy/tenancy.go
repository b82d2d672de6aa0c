// Package tenancy decides what a workspace may do on the fleet's member
// clusters, from the ClusterGrants in the platform workspace: which clusters
// it may place onto, and on each of them whether it may place CRDs and
// adopt objects that already exist.
package tenancy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

// PlatformPath is the platform workspace; its placements may use every
// cluster and are not held to the team rules.
var PlatformPath = logicalcluster.NewPath("root:fleet")

// Grants reads ClusterGrants from the platform workspace (a cached reader).
type Grants struct {
	Reader client.Reader
}

// Access is what one workspace may do: the union of the grants naming it.
type Access struct {
	platform bool
	grants   []grant
}

type grant struct {
	selector labels.Selector
	spec     tenancyv1alpha1.ClusterGrantSpec
}

// For returns the access of the workspace at path.
func (g *Grants) For(ctx context.Context, path logicalcluster.Path) (*Access, error) {
	if path == PlatformPath {
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
		if !Covers(cg.Spec.Workspaces, path) {
			continue
		}
		sel, err := selector(cg.Spec.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("ClusterGrant %s: %w", cg.Name, err)
		}
		a.grants = append(a.grants, grant{selector: sel, spec: cg.Spec})
	}
	return a, nil
}

// Platform tells whether this is the platform workspace, which is not held
// to the team rules.
func (a *Access) Platform() bool { return a.platform }

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

// Covers tells whether one of the workspace patterns matches path: an exact
// path, or a prefix ending in ":*" for every workspace below it.
func Covers(patterns []string, path logicalcluster.Path) bool {
	p := path.String()
	for _, pattern := range patterns {
		if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
			if strings.HasPrefix(p, prefix+":") {
				return true
			}
			continue
		}
		if pattern == p {
			return true
		}
	}
	return false
}
