package clustergrant

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

func member(name string) *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// While members join one after another, a grant's status is written at
// most once per statusInterval, and then shows every member.
func TestGrantStatusIsWrittenOncePerIntervalWhileMembersJoin(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1beta1.AddToScheme, tenancyv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	grant := &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "all-teams"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(grant, member("m-1")).WithStatusSubresource(grant).Build()
	now := time.Unix(1000, 0)
	r := &Reconciler{Client: c, Now: func() time.Time { return now }}
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(grant)}
	count := func() int32 {
		got := &tenancyv1alpha1.ClusterGrant{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got.Status.ClusterCount
	}

	if res, err := r.Reconcile(ctx, req); err != nil || res.RequeueAfter != 0 || count() != 1 {
		t.Fatalf("first reconcile: %v %v, count %d", res, err, count())
	}
	for _, name := range []string{"m-2", "m-3"} {
		if err := c.Create(ctx, member(name)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(100 * time.Millisecond)
		res, err := r.Reconcile(ctx, req)
		if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > statusInterval {
			t.Fatalf("a reconcile within the interval: %v %v", res, err)
		}
		if count() != 1 {
			t.Fatalf("written within the interval: count %d", count())
		}
	}
	now = now.Add(statusInterval)
	if res, err := r.Reconcile(ctx, req); err != nil || res.RequeueAfter != 0 || count() != 3 {
		t.Fatalf("after the interval: %v %v, count %d", res, err, count())
	}
}
