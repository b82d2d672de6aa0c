package placements

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// indexes records the indexes AddIndexes adds, to build a fake client
// with them.
type indexes struct{ b *fake.ClientBuilder }

func (i indexes) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	i.b.WithIndex(obj, field, f)
	return nil
}

func TestBindingsAreListedByTheirPlacementsIndex(t *testing.T) {
	s := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	meta := func(namespace, name, placement string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Namespace: namespace, Name: name}
		if placement != "" {
			m.Labels = map[string]string{placementv1beta1.PlacementTrackingLabel: placement}
		}
		return m
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&placementv1beta1.ClusterResourceBinding{ObjectMeta: meta("", "web-member-1-a", "web")},
		&placementv1beta1.ClusterResourceBinding{ObjectMeta: meta("", "web-member-2-b", "web")},
		&placementv1beta1.ClusterResourceBinding{ObjectMeta: meta("", "db-member-1-c", "db")},
		&placementv1beta1.ClusterResourceBinding{ObjectMeta: meta("", "untracked", "")},
		// A ResourcePlacement "web" in two namespaces.
		&placementv1beta1.ResourceBinding{ObjectMeta: meta("team-a", "web-member-1-d", "web")},
		&placementv1beta1.ResourceBinding{ObjectMeta: meta("team-b", "web-member-1-e", "web")},
	)
	// The API server knows no index: a client built before the indexes
	// reads like one.
	server := b.Build()
	if err := AddIndexes(context.Background(), indexes{b}); err != nil {
		t.Fatal(err)
	}
	c := b.Build()

	tests := []struct {
		key  Key
		want []string
	}{
		{Key{Name: "web"}, []string{"web-member-1-a", "web-member-2-b"}},
		{Key{Name: "db"}, []string{"db-member-1-c"}},
		{Key{Name: "gone"}, nil},
		{Key{Namespace: "team-a", Name: "web"}, []string{"web-member-1-d"}},
		{Key{Namespace: "team-b", Name: "web"}, []string{"web-member-1-e"}},
	}
	names := func(bindings []placementv1beta1.BindingObj, err error) []string {
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range bindings {
			got = append(got, b.GetName())
		}
		slices.Sort(got)
		return got
	}
	for _, tt := range tests {
		if got := names(Bindings(context.Background(), c, tt.key)); !slices.Equal(got, tt.want) {
			t.Errorf("bindings of %s = %v, want %v", tt.key, got, tt.want)
		}
		if got := names(BindingsFromServer(context.Background(), server, tt.key)); !slices.Equal(got, tt.want) {
			t.Errorf("bindings of %s from the server = %v, want %v", tt.key, got, tt.want)
		}
	}
}
