package placement

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func obj(group, kind, namespace, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind})
	o.SetNamespace(namespace)
	o.SetName(name)
	return o
}

func TestCheckTeamObjects(t *testing.T) {
	reserved := []string{"platform-*"}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string // "" means allowed
	}{
		{"a namespace of the team's", obj("", "Namespace", "", "web"), ""},
		{"a config map in it", obj("", "ConfigMap", "web", "cfg"), ""},
		{"a CRD (the grants decide per cluster)", obj("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.com"), ""},
		{"a ClusterRoleBinding", obj("rbac.authorization.k8s.io", "ClusterRoleBinding", "", "admin"), "ClusterRoleBinding admin is cluster-scoped"},
		{"a webhook configuration", obj("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "", "hook"), "is cluster-scoped"},
		{"the default namespace", obj("", "Namespace", "", "default"), "namespace default is reserved"},
		{"an object in kube-system", obj("", "ConfigMap", "kube-system", "cfg"), "is in namespace kube-system, which is reserved"},
		{"a namespace the hub reserves", obj("", "Namespace", "", "platform-system"), "namespace platform-system is reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkTeamObjects([]*unstructured.Unstructured{tc.obj}, reserved)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want allowed", err)
			case tc.want != "" && (err == nil || !errors.Is(err, errInvalidSelectors) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want an invalid selector error with %q", err, tc.want)
			}
		})
	}
}
