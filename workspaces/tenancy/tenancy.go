// Package tenancy decides which member clusters a workspace may place onto,
// from the ClusterGrants in the platform workspace.
package tenancy

import (
	"context"
	"fmt"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// PlatformPath is the platform workspace; its placements may use every cluster.
var PlatformPath = logicalcluster.NewPath("root:fleet")

// Grants reads ClusterGrants from the platform workspace (a cached reader).
type Grants struct {
	Reader client.Reader
}

// Granted returns a predicate telling whether the workspace at path may use a
// member cluster: the union of the clusters of all grants naming it.
func (g *Grants) Granted(ctx context.Context, path logicalcluster.Path) (func(*clusterv1beta1.MemberCluster) bool, error) {
	if path == PlatformPath {
		return func(*clusterv1beta1.MemberCluster) bool { return true }, nil
	}
	list := &tenancyv1alpha1.ClusterGrantList{}
	if err := g.Reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("reading ClusterGrants: %w", err)
	}
	var selectors []labels.Selector
	for _, grant := range list.Items {
		if !Covers(grant.Spec.Workspaces, path) {
			continue
		}
		sel, err := selector(grant.Spec.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("ClusterGrant %s: %w", grant.Name, err)
		}
		selectors = append(selectors, sel)
	}
	return func(mc *clusterv1beta1.MemberCluster) bool {
		set := labels.Set(mc.Labels)
		for _, s := range selectors {
			if s.Matches(set) {
				return true
			}
		}
		return false
	}, nil
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
