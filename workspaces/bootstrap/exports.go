package bootstrap

import (
	"context"
	"fmt"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
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
