package override

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func ro(name string, created time.Time, configMap, value string) *placementv1beta1.ResourceOverride {
	return &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: configMap}},
			Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{},
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{
					Operator: placementv1beta1.JSONPatchOverrideOpAdd, Path: "/data/x", Value: apiextensionsv1.JSON{Raw: []byte(`"` + value + `"`)},
				}},
			}}},
		},
	}
}

func TestValidate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	older := ro("older", t0, "settings", "a")
	newer := ro("newer", t0.Add(time.Minute), "settings", "b")
	elsewhere := ro("elsewhere", t0.Add(time.Minute), "other", "b")
	withValue := ro("remove", t0.Add(time.Minute), "third", "b")
	withValue.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Operator = placementv1beta1.JSONPatchOverrideOpRemove
	c := fakeClient(t, older, newer, elsewhere, withValue)
	r := &Reconciler{Namespaced: true}
	tests := []struct {
		o       client.Object
		wantErr string
	}{
		{older, ""},
		{elsewhere, ""},
		{newer, "ResourceOverride newer selects v1 ConfigMap settings, which ResourceOverride older already selects"},
		{withValue, "ResourceOverride remove: overrideRules[0].jsonPatchOverrides[0]: a remove operation takes no value"},
	}
	for _, tc := range tests {
		err := r.validate(context.Background(), c, tc.o)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want %q", tc.o.GetName(), err, tc.wantErr)
		}
	}
}

func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	o := ro("web", time.Now(), "settings", "v0")
	c := fakeClient(t, o)
	r := &Reconciler{Namespaced: true}
	snapshots := func() map[string]string {
		list := &placementv1beta1.ResourceOverrideSnapshotList{}
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range list.Items {
			out[s.Name] = s.Labels[placementv1beta1.IsLatestSnapshotLabel]
		}
		return out
	}
	for i := 0; i < 7; i++ {
		o.Spec.Policy.OverrideRules[0].JSONPatchOverrides[0].Value.Raw = []byte(`"v` + string(rune('0'+i)) + `"`)
		if err := r.snapshot(ctx, c, o); err != nil {
			t.Fatal(err)
		}
		// An unchanged spec makes no snapshot.
		if err := r.snapshot(ctx, c, o); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"web-2": "false", "web-3": "false", "web-4": "false", "web-5": "false", "web-6": "true"}
	got := snapshots()
	if len(got) != len(want) {
		t.Fatalf("snapshots = %v, want %v", got, want)
	}
	for name, latest := range want {
		if got[name] != latest {
			t.Errorf("snapshots = %v, want %v", got, want)
		}
	}
}
