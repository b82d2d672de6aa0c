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

// Each object is updated and status-updated through Dropping; every write
// must carry the managed fields want says.
func TestUpdatesCarry(t *testing.T) {
	cleared := func(mf []metav1.ManagedFieldsEntry) bool {
		return len(mf) == 1 && mf[0].Manager == "" && mf[0].FieldsV1 == nil
	}
	kept := func(mf []metav1.ManagedFieldsEntry) bool { return len(mf) == 1 && mf[0].Manager == "fleet-hub" }
	for _, tc := range []struct {
		name string
		obj  client.Object
		want func([]metav1.ManagedFieldsEntry) bool
	}{
		{"a binding with records: the single empty entry that clears them",
			&placementv1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ManagedFields: someRecords}}, cleared},
		// As a cache that strips managed fields shows it.
		{"a Work showing none: the single empty entry all the same",
			&placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "fleet-member-a"}}, cleared},
		{"a placement (a user's object): its own records",
			&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: someRecords}}, kept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, sent := recording(t, tc.obj)
			ctx := context.Background()
			if err := c.Update(ctx, tc.obj); err != nil {
				t.Fatal(err)
			}
			if err := c.Status().Update(ctx, tc.obj); err != nil {
				t.Fatal(err)
			}
			if len(*sent) != 2 {
				t.Fatalf("%d writes recorded, want 2", len(*sent))
			}
			for i, mf := range *sent {
				if !tc.want(mf) {
					t.Errorf("write %d carried managed fields %v", i, mf)
				}
			}
		})
	}
}
