package placements

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestPeekFindsThePlacementOfItsKindAndNamespace(t *testing.T) {
	s := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "crp-web"}},
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "crp-db"}},
		&placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "rp-a-web"}},
		&placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "api", UID: "rp-b-api"}},
	)
	if err := AddIndexes(context.Background(), indexes{b}); err != nil {
		t.Fatal(err)
	}
	c := b.Build()

	for _, tc := range []struct {
		key     Key
		wantUID string
	}{
		{Key{Name: "web"}, "crp-web"},
		{Key{Name: "db"}, "crp-db"},
		{Key{Namespace: "team-a", Name: "web"}, "rp-a-web"},
		{Key{Namespace: "team-b", Name: "api"}, "rp-b-api"},
		// Another kind's, another namespace's, nobody's.
		{Key{Name: "api"}, ""},
		{Key{Namespace: "team-a", Name: "api"}, ""},
		{Key{Namespace: "team-b", Name: "db"}, ""},
	} {
		p, err := Peek(context.Background(), c, tc.key)
		switch {
		case tc.wantUID == "" && !apierrors.IsNotFound(err):
			t.Errorf("Peek(%s) = %v, %v; want NotFound", tc.key, p, err)
		case tc.wantUID != "" && (err != nil || string(p.GetUID()) != tc.wantUID):
			t.Errorf("Peek(%s) = %v, %v; want the placement %s", tc.key, p, err, tc.wantUID)
		}
	}
}
