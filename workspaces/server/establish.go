package server

import (
	"context"
	"fmt"
	"time"

	kcpapiextensions "github.com/kcp-dev/client-go/apiextensions/client"
	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// establishRequestAnnotation is written on a CRD to make the API server look
// at it again.
const establishRequestAnnotation = "fleetplane.io/establish-requested"

// establishStuckCRDs finishes the installation of CRDs that a previous run
// of the hub left half done. The API server establishes a CRD when it sees
// an update that accepted its names; a hub stopped between the two (easily
// during its first bootstrap, when kcp creates the CRDs behind every API
// binding) leaves CRDs "Installing" for good, and every binding to them
// stuck. Touching such a CRD produces the update the API server waits for.
func establishStuckCRDs(ctx context.Context, loopback *rest.Config) error {
	c, err := kcpapiextensions.NewForConfig(loopback)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithName("crd-establishing")
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 7, Cap: 30 * time.Second}
	var stuck []*apiextensionsv1.CustomResourceDefinition
	err = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		list, err := c.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
		if err != nil {
			logger.V(2).Info("listing CRDs", "err", err)
			return false, nil
		}
		stuck = stuck[:0]
		for i := range list.Items {
			if crd := &list.Items[i]; installing(crd) {
				stuck = append(stuck, crd)
			}
		}
		if len(stuck) == 0 {
			return true, nil
		}
		for _, crd := range stuck {
			cluster := logicalcluster.From(crd)
			logger.Info("asking the API server to establish a CRD left installing", "cluster", cluster, "crd", crd.Name)
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, establishRequestAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
			_, err := c.Cluster(cluster.Path()).ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				logger.V(2).Info("touching CRD", "cluster", cluster, "crd", crd.Name, "err", err)
			}
		}
		return false, nil
	})
	if err != nil && len(stuck) > 0 {
		return fmt.Errorf("%d CRDs stay installing (first: %s in %s): %w", len(stuck), stuck[0].Name, logicalcluster.From(stuck[0]), err)
	}
	return err
}

// installing tells whether a CRD's names are accepted but it is not
// established.
func installing(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) &&
		!apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
}
