package bootstrap

import (
	"context"
	"fmt"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ExportIdentity waits until kcp has given the named APIExport (in the
// workspace c reads) its identity hash, which wildcard requests for the
// resources it exports must carry, and returns the export.
func ExportIdentity(ctx context.Context, c client.Reader, name string) (*apisv1alpha2.APIExport, error) {
	export := &apisv1alpha2.APIExport{}
	err := poll(ctx, fmt.Sprintf("the identity of APIExport %s", name), func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, export)
		return err == nil && export.Status.IdentityHash != "", err
	})
	if err != nil {
		return nil, err
	}
	return export, nil
}

// ExportEndpoint waits until kcp publishes the URL of the virtual workspace
// of the named APIExport in its endpoint slice of the same name.
func ExportEndpoint(ctx context.Context, c client.Reader, name string) (string, error) {
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	err := poll(ctx, fmt.Sprintf("the virtual workspace URL of APIExport %s", name), func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, slice)
		return err == nil && len(slice.Status.APIExportEndpoints) > 0, err
	})
	if err != nil {
		return "", err
	}
	return slice.Status.APIExportEndpoints[0].URL, nil
}

// VirtualWorkspaceServes waits until the virtual workspace at vw (an
// APIExport's URL) serves gv across workspaces. A shard's virtual
// workspaces learn the exports of root:fleet from kcp's cache server, a
// moment after the shard starts.
func VirtualWorkspaceServes(ctx context.Context, vw *rest.Config, gv schema.GroupVersion) error {
	cfg := rest.CopyConfig(vw)
	cfg.Host += logicalcluster.Wildcard.RequestPath()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return poll(ctx, fmt.Sprintf("the virtual workspace at %s to serve %s", vw.Host, gv), func(context.Context) (bool, error) {
		_, err := dc.ServerResourcesForGroupVersion(gv.String())
		return err == nil, err
	})
}
