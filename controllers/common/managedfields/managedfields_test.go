package managedfields

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// recording records the managed fields each update carried to the API server.
func recording(t *testing.T, objs ...client.Object) (client.Client, *[][]metav1.ManagedFieldsEntry) {
	t.Helper()
	s := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var sent [][]metav1.ManagedFieldsEntry
	record := func(obj client.Object) { sent = append(sent, obj.GetManagedFields()) }
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(objs...).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				record(obj)
				return c.Update(ctx, obj, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				record(obj)
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	return Dropping(c), &sent
}

var someRecords = []metav1.ManagedFieldsEntry{{Manager: "fleet-hub", Operation: metav1.ManagedFieldsOperationUpdate}}

func TestInternalObjectsDropRecords(t *testing.T) {
	b := &placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ManagedFields: someRecords}}
	// As a cache that strips managed fields shows it.
	w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "fleet-member-a"}}
	c, sent := recording(t, b, w)
	ctx := context.Background()
	if err := c.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	for i, mf := range *sent {
		if len(mf) != 1 || mf[0].Manager != "" || mf[0].FieldsV1 != nil {
			t.Errorf("update %d carried managed fields %v, want the single empty entry that clears them", i, mf)
		}
	}
}

func TestUserObjectsKeepRecords(t *testing.T) {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: someRecords}}
	c, sent := recording(t, p)
	ctx := context.Background()
	if err := c.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	for i, mf := range *sent {
		if len(mf) != 1 || mf[0].Manager != "fleet-hub" {
			t.Errorf("update %d of a placement was sent managed fields %v; want its own records kept", i, mf)
		}
	}
}
