package clients

import (
	"context"
	"fmt"
	"time"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// exportWait bounds how long the hub waits at start for kcp to fill in an
// APIExport's status: the hub bootstraps its exports before starting the
// controllers, so only a stuck kcp controller takes this long.
const exportWait = 2 * time.Minute

// ExportIdentity waits until kcp has given the named APIExport (in the
// workspace c reads) its identity hash, which wildcard requests for the
// resources it exports must carry, and returns the export.
func ExportIdentity(ctx context.Context, c client.Reader, name string) (*apisv1alpha2.APIExport, error) {
	export := &apisv1alpha2.APIExport{}
	if err := waitForStatus(ctx, c, name, export, func() bool { return export.Status.IdentityHash != "" }); err != nil {
		return nil, fmt.Errorf("waiting for the identity of APIExport %s: %w", name, err)
	}
	return export, nil
}

// ExportEndpoint waits until kcp publishes the URL of the virtual workspace
// of the named APIExport in its endpoint slice of the same name.
func ExportEndpoint(ctx context.Context, c client.Reader, name string) (string, error) {
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	if err := waitForStatus(ctx, c, name, slice, func() bool { return len(slice.Status.APIExportEndpoints) > 0 }); err != nil {
		return "", fmt.Errorf("waiting for the virtual workspace URL of APIExport %s: %w", name, err)
	}
	return slice.Status.APIExportEndpoints[0].URL, nil
}

// waitForStatus reads the cluster-scoped object name into obj until ready
// says its status is filled in. Read errors are retried: at start the
// object may not exist yet.
func waitForStatus(ctx context.Context, c client.Reader, name string, obj client.Object, ready func() bool) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, exportWait, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Name: name}, obj) == nil && ready(), nil
	})
}
