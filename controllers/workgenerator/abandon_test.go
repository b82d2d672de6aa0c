package workgenerator

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// unread fails the test if the placement is read from it.
type unread struct {
	client.Reader
	t *testing.T
}

func (u unread) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	u.t.Fatal("the placement was read from the API server though the cache has seen its deletion")
	return nil
}

func placementWeb(deleting bool, strategy placementv1beta1.DeletePropagationPolicy) *placementv1beta1.ClusterResourcePlacement {
	p := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	p.Spec.Strategy.DeleteStrategy = &placementv1beta1.DeleteStrategy{PropagationPolicy: strategy}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp, p.Finalizers = &now, []string{"keep"}
	}
	return p
}

func TestAbandoning(t *testing.T) {
	ctx := context.Background()
	o := origin{workspace: workspace, binding: binding("")}
	abandon := placementv1beta1.DeletePropagationPolicyAbandon

	got, err := abandoning(ctx, fakeClient(t, placementWeb(true, abandon)), unread{t: t}, o, nil)
	if err != nil || !got {
		t.Errorf("cache sees the deletion with Abandon: abandoning = %v, %v; want true", got, err)
	}
	got, err = abandoning(ctx, fakeClient(t, placementWeb(false, abandon)), fakeClient(t, placementWeb(true, abandon)), o, nil)
	if err != nil || !got {
		t.Errorf("only the API server has seen the deletion with Abandon: abandoning = %v, %v; want true", got, err)
	}
	got, err = abandoning(ctx, fakeClient(t, placementWeb(false, abandon)), fakeClient(t, placementWeb(false, abandon)), o, nil)
	if err != nil || got {
		t.Errorf("a cluster unpicked from a live placement: abandoning = %v, %v; want false", got, err)
	}
	works := []placementv1beta1.Work{{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{placementv1beta1.PlacementDeleteStrategyAnnotation: string(abandon)}}}}
	got, err = abandoning(ctx, fakeClient(t), fakeClient(t), o, works)
	if err != nil || !got {
		t.Errorf("a force-deleted placement whose Works recorded Abandon: abandoning = %v, %v; want true", got, err)
	}
}
