package clients

import (
	"context"
	"errors"
	"testing"

	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A small tree: root ─ teams (lc "t") ─ team-a (lc "a"), team-b (lc "b").
var workspaces = map[string]map[string]string{ // parent lc -> workspace name -> child lc
	"root": {"teams": "t"},
	"t":    {"team-a": "a", "team-b": "b"},
}

var parents = map[string]string{"t": "root", "a": "t", "b": "t"}

func logicalClusterOf(name string, mutate func(*corev1alpha1.LogicalCluster)) func(context.Context) (*corev1alpha1.LogicalCluster, error) {
	return func(context.Context) (*corev1alpha1.LogicalCluster, error) {
		lc := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
		if parent, ok := parents[name]; ok {
			for wsName, child := range workspaces[parent] {
				if child == name {
					lc.Spec.Owner = &corev1alpha1.LogicalClusterOwner{Resource: "workspaces", Cluster: parent, Name: wsName}
				}
			}
		}
		if mutate != nil {
			mutate(lc)
		}
		return lc, nil
	}
}

func workspaceIn(_ context.Context, parent logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	child, ok := workspaces[parent.String()][name]
	if !ok {
		return nil, errors.New("not found")
	}
	return &tenancyv1alpha1.Workspace{Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: child}}, nil
}

func pathOf(ctx context.Context, name logicalcluster.Name) (logicalcluster.Path, error) {
	return resolvePath(ctx, name, logicalClusterOf(name.String(), nil), workspaceIn, pathOf)
}

func TestResolvePath(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		mutate  func(*corev1alpha1.LogicalCluster)
		want    string // "" means an error
	}{
		{name: "root", cluster: "root", want: "root"},
		{name: "team", cluster: "a", want: "root:teams:team-a"},
		{name: "the path annotation is not trusted", cluster: "b", want: "root:teams:team-b", mutate: func(lc *corev1alpha1.LogicalCluster) {
			lc.Annotations = map[string]string{"kcp.io/path": "root:teams:team-a"}
		}},
		{name: "an owner pointing at another team's workspace", cluster: "b", mutate: func(lc *corev1alpha1.LogicalCluster) {
			lc.Spec.Owner.Name = "team-a"
		}},
		{name: "an owner that does not exist", cluster: "b", mutate: func(lc *corev1alpha1.LogicalCluster) {
			lc.Spec.Owner.Name = "team-x"
		}},
		{name: "no owner", cluster: "b", mutate: func(lc *corev1alpha1.LogicalCluster) { lc.Spec.Owner = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolvePath(context.Background(), logicalcluster.Name(tc.cluster), logicalClusterOf(tc.cluster, tc.mutate), workspaceIn, pathOf)
			switch {
			case tc.want == "" && err == nil:
				t.Errorf("path = %s, want an error", got)
			case tc.want != "" && (err != nil || got.String() != tc.want):
				t.Errorf("path = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
