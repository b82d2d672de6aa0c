package localfleet

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/workhomes"
)

// Works returns a reader of the Work of every home: root:fleet, and on a
// hub of several shards each further shard's works workspace
// (root:fleet:works-<shard>). A WorkList it lists holds the Works of all of
// them; every other read is root:fleet's.
func (h *Hub) Works(s *runtime.Scheme) (client.Reader, error) {
	fleet, err := h.Client(tenancyv1alpha1.FleetWorkspace.String(), s)
	if err != nil {
		return nil, err
	}
	return &everyHome{Client: fleet, hub: h, scheme: s}, nil
}

type everyHome struct {
	client.Client
	hub    *Hub
	scheme *runtime.Scheme
}

func (e *everyHome) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	works, ok := list.(*placementv1beta1.WorkList)
	if !ok {
		return e.Client.List(ctx, list, opts...)
	}
	if err := e.Client.List(ctx, works, opts...); err != nil {
		return err
	}
	homes, err := e.hub.KCP(tenancyv1alpha1.FleetWorkspace.String()).TenancyV1alpha1().Workspaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ws := range homes.Items {
		if !strings.HasPrefix(ws.Name, workhomes.WorkspaceName("")) {
			continue
		}
		c, err := e.hub.Client(tenancyv1alpha1.FleetWorkspace.Join(ws.Name).String(), e.scheme)
		if err != nil {
			return err
		}
		more := &placementv1beta1.WorkList{}
		if err := c.List(ctx, more, opts...); err != nil {
			return err
		}
		works.Items = append(works.Items, more.Items...)
	}
	return nil
}
