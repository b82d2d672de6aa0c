package bootstrap

import (
	"context"
	"strings"
	"testing"
	"time"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func exportScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apisv1alpha1.AddToScheme, apisv1alpha2.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestExportIdentityWaitsForKcpToFillItIn(t *testing.T) {
	ctx := context.Background()
	export := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "placement"}}
	c := fake.NewClientBuilder().WithScheme(exportScheme(t)).WithStatusSubresource(export).WithObjects(export).Build()
	go func() {
		time.Sleep(300 * time.Millisecond)
		export.Status.IdentityHash = "abc"
		if err := c.Status().Update(ctx, export); err != nil {
			t.Error(err)
		}
	}()
	got, err := ExportIdentity(ctx, c, "placement")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.IdentityHash != "abc" {
		t.Errorf("identity %q, want abc", got.Status.IdentityHash)
	}
}

func TestExportEndpointNamesTheExportWhenItGivesUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	slice := &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "placement"}}
	c := fake.NewClientBuilder().WithScheme(exportScheme(t)).WithObjects(slice).Build()
	_, err := ExportEndpoint(ctx, c, "placement")
	if err == nil || !strings.Contains(err.Error(), "APIExport placement") {
		t.Fatalf("error %v, want one naming APIExport placement", err)
	}
}

func TestExportEndpointReturnsThePublishedURL(t *testing.T) {
	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "placement"},
		Status:     apisv1alpha1.APIExportEndpointSliceStatus{APIExportEndpoints: []apisv1alpha1.APIExportEndpoint{{URL: "https://hub/services/apiexport/root:fleet/placement"}}},
	}
	c := fake.NewClientBuilder().WithScheme(exportScheme(t)).WithObjects(slice).Build()
	got, err := ExportEndpoint(context.Background(), c, "placement")
	if err != nil {
		t.Fatal(err)
	}
	if got != slice.Status.APIExportEndpoints[0].URL {
		t.Errorf("URL %q, want %q", got, slice.Status.APIExportEndpoints[0].URL)
	}
}
