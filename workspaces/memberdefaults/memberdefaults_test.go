package memberdefaults

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

func attributes(obj runtime.Object, resource, subresource string) admission.Attributes {
	m := obj.(metav1.Object)
	return admission.NewAttributesRecord(obj, nil, clusterv1beta1.GroupVersion.WithKind("MemberCluster"), "", m.GetName(),
		clusterv1beta1.GroupVersion.WithResource(resource), subresource, admission.Create, &metav1.CreateOptions{}, false, nil)
}

func member(name string, labels map[string]string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(clusterv1beta1.GroupVersion.WithKind("MemberCluster"))
	u.SetName(name)
	u.SetLabels(labels)
	u.SetFinalizers(finalizers)
	return u
}

func TestAdmitAddsFinalizerAndLabel(t *testing.T) {
	cases := []struct {
		name           string
		obj            *unstructured.Unstructured
		wantFinalizers []string
		wantLabel      string
	}{
		{"new member", member("m1", nil), []string{clusterv1beta1.MemberClusterFinalizer}, "m1"},
		{"own labels kept, wrong name label corrected", member("m2", map[string]string{"env": "prod", clusterv1beta1.MemberClusterNameLabel: "other"}),
			[]string{clusterv1beta1.MemberClusterFinalizer}, "m2"},
		{"finalizer not doubled", member("m3", nil, "example.com/keep", clusterv1beta1.MemberClusterFinalizer),
			[]string{"example.com/keep", clusterv1beta1.MemberClusterFinalizer}, "m3"},
		{"generated name: no label yet", member("", nil), []string{clusterv1beta1.MemberClusterFinalizer}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.obj.GetLabels()["env"]
			if err := New().Admit(context.Background(), attributes(c.obj, "memberclusters", ""), nil); err != nil {
				t.Fatal(err)
			}
			if got := c.obj.GetFinalizers(); !slices.Equal(got, c.wantFinalizers) {
				t.Errorf("finalizers %v, want %v", got, c.wantFinalizers)
			}
			if got := c.obj.GetLabels()[clusterv1beta1.MemberClusterNameLabel]; got != c.wantLabel {
				t.Errorf("name label %q, want %q", got, c.wantLabel)
			}
			if got := c.obj.GetLabels()["env"]; got != before {
				t.Errorf("label env %q, want %q", got, before)
			}
		})
	}
}

func TestAdmitLeavesOtherResources(t *testing.T) {
	for _, a := range []admission.Attributes{
		attributes(member("m1", nil), "internalmemberclusters", ""),
		attributes(member("m1", nil), "memberclusters", "status"),
		admission.NewAttributesRecord(member("m1", nil), nil, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "MemberCluster"}, "", "m1",
			schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "memberclusters"}, "", admission.Create, &metav1.CreateOptions{}, false, nil),
	} {
		if err := New().Admit(context.Background(), a, nil); err != nil {
			t.Fatal(err)
		}
		if obj := a.GetObject().(metav1.Object); len(obj.GetFinalizers()) != 0 || len(obj.GetLabels()) != 0 {
			t.Errorf("%s/%s changed: finalizers %v, labels %v", a.GetResource(), a.GetSubresource(), obj.GetFinalizers(), obj.GetLabels())
		}
	}
}
