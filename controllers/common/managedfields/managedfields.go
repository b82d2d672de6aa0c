// Package managedfields keeps the API server's field-ownership records
// (metadata.managedFields) off the objects only Fleetplane's controllers and
// syncers write: bindings, Works, snapshots and InternalMemberClusters.
//
// Nobody applies those objects server-side, so the records serve no
// conflict detection; yet the API server rebuilds them on every write (a
// typed merge of the whole object) and stores them: 1.9 KB of each binding
// and 1.5 KB of each Work, a third of the bytes a placement-cluster pair
// keeps in etcd, decoded again by every watcher. An update that carries a
// single empty entry clears them, and the API server records nothing for
// later updates of an object that has none (it starts again only with a
// server-side apply). Objects users write (placements, MemberClusters,
// overrides) keep their records.
package managedfields

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Dropping returns a client whose updates of internal objects clear their
// managed fields. Status updates cannot clear them (the API server keeps
// the stored records for a subresource) but record nothing once they are
// gone.
func Dropping(c client.Client) client.Client { return dropping{c} }

// NewClient is a controller-runtime NewClientFunc for managers whose writes
// should drop the managed fields of internal objects.
func NewClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.New(config, options)
	if err != nil {
		return nil, err
	}
	return Dropping(c), nil
}

type dropping struct{ client.Client }

func (c dropping) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	dropRecords(obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c dropping) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c dropping) SubResource(name string) client.SubResourceClient {
	return droppingSubResource{c.Client.SubResource(name)}
}

type droppingSubResource struct{ client.SubResourceClient }

func (c droppingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	dropRecords(obj)
	return c.SubResourceClient.Update(ctx, obj, opts...)
}

// dropRecords makes obj ask the API server to clear its records: a single
// empty entry (a fresh one each time, since the response is decoded into
// the same slice). It is sent even when obj shows none: caches that strip
// managed fields show none while the stored object may still have them.
func dropRecords(obj client.Object) {
	if internal(obj) {
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{{}})
	}
}

// internal tells whether obj is of a kind only Fleetplane writes.
func internal(obj client.Object) bool {
	switch obj.(type) {
	case *placementv1beta1.ClusterResourceBinding, *placementv1beta1.ResourceBinding,
		*placementv1beta1.Work,
		*placementv1beta1.ClusterSchedulingPolicySnapshot, *placementv1beta1.SchedulingPolicySnapshot,
		*placementv1beta1.ClusterResourceSnapshot, *placementv1beta1.ResourceSnapshot,
		*clusterv1beta1.InternalMemberCluster:
		return true
	}
	return false
}
