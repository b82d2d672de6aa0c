package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

func TestWatchUntilSeesChangesUntilDone(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seen := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- watchUntil(ctx, c, &clusterv1beta1.MemberClusterList{}, func(obj client.Object, deleted bool) bool {
			seen <- obj.GetName()
			return deleted
		})
	}()
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	if err := c.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	// The watch starts some time after watchUntil is called: change the
	// object until a change is seen.
	for i := 0; ; i++ {
		mc.Labels = map[string]string{"change": fmt.Sprint(i)}
		if err := c.Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
		select {
		case <-seen:
		case <-time.After(50 * time.Millisecond):
			continue
		}
		break
	}
	if err := c.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("watchUntil ends once seen is done: %v", err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := watchUntil(ctx, c, &clusterv1beta1.MemberClusterList{}, func(client.Object, bool) bool { return false }); err == nil {
		t.Error("watchUntil ends with its context")
	}
}
