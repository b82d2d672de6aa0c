package placement

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// object builds an unstructured object; fields, if given, are merged into
// its top level (spec, data, type, ...).
func object(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		o.Object[k] = v
	}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace(namespace)
	o.SetName(name)
	return o
}

func withLabels(o *unstructured.Unstructured, labels map[string]string) *unstructured.Unstructured {
	o.SetLabels(labels)
	return o
}

func TestSanitizeStripsServerMetadata(t *testing.T) {
	in := object("v1", "ConfigMap", "app", "cfg", map[string]any{
		"data":   map[string]any{"k": "v"},
		"status": map[string]any{"phase": "whatever"},
	})
	in.SetLabels(map[string]string{"app": "web"})
	in.SetUID("uid-1")
	in.SetResourceVersion("42")
	in.SetGeneration(3)
	in.SetSelfLink("/api/v1/namespaces/app/configmaps/cfg")
	in.SetGenerateName("cfg-")
	in.SetCreationTimestamp(metav1.Now())
	now := metav1.Now()
	in.SetDeletionTimestamp(&now)
	in.SetDeletionGracePeriodSeconds(new(int64))
	in.SetFinalizers([]string{"example.com/keep"})
	in.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "uid-2"}})
	in.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}})
	in.SetAnnotations(map[string]string{
		"kcp.io/cluster":                                   "2abc",
		"experimental.tenancy.kcp.io/owner":                "someone",
		"kubectl.kubernetes.io/last-applied-configuration": "{}",
		"deployment.kubernetes.io/revision":                "4",
		"team.example.com/owner":                           "team-a",
	})
	orig := in.DeepCopy()

	got := sanitize(in)

	want := object("v1", "ConfigMap", "app", "cfg", map[string]any{"data": map[string]any{"k": "v"}})
	want.SetLabels(map[string]string{"app": "web"})
	want.SetAnnotations(map[string]string{"team.example.com/owner": "team-a"})
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("sanitize =\n%v\nwant\n%v", got.Object, want.Object)
	}
	if !reflect.DeepEqual(in.Object, orig.Object) {
		t.Errorf("sanitize modified its input")
	}
}

func TestSanitizeDropsEmptiedAnnotations(t *testing.T) {
	in := object("v1", "ConfigMap", "app", "cfg", nil)
	in.SetAnnotations(map[string]string{"kcp.io/cluster": "2abc", "kubectl.kubernetes.io/last-applied-configuration": "{}"})
	got := sanitize(in)
	if _, ok := got.Object["metadata"].(map[string]any)["annotations"]; ok {
		t.Errorf("metadata.annotations = %v, want no annotations key", got.GetAnnotations())
	}
}

func TestSanitizeKindSpecificFields(t *testing.T) {
	jobTemplate := func() map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{
			"app": "batch", "controller-uid": "u", "batch.kubernetes.io/controller-uid": "u",
			"job-name": "j", "batch.kubernetes.io/job-name": "j",
		}}}
	}
	selector := map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "u"}}
	tests := []struct {
		name     string
		in       *unstructured.Unstructured
		wantSpec map[string]any
	}{
		{
			name: "Service loses cluster IPs, health check and node ports",
			in: object("v1", "Service", "app", "web", map[string]any{"spec": map[string]any{
				"type": "LoadBalancer", "clusterIP": "10.0.0.1", "clusterIPs": []any{"10.0.0.1"}, "healthCheckNodePort": int64(31000),
				"ports": []any{
					map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080), "nodePort": int64(30080)},
					map[string]any{"name": "https", "port": int64(443)},
				},
			}}),
			wantSpec: map[string]any{"type": "LoadBalancer", "ports": []any{
				map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080)},
				map[string]any{"name": "https", "port": int64(443)},
			}},
		},
		{
			name: "a headless Service stays headless",
			in: object("v1", "Service", "app", "db", map[string]any{"spec": map[string]any{
				"clusterIP": "None", "clusterIPs": []any{"None"}, "selector": map[string]any{"app": "db"},
			}}),
			wantSpec: map[string]any{"clusterIP": "None", "clusterIPs": []any{"None"}, "selector": map[string]any{"app": "db"}},
		},
		{
			name:     "Job loses its generated selector and template labels",
			in:       object("batch/v1", "Job", "app", "j", map[string]any{"spec": map[string]any{"selector": selector, "template": jobTemplate()}}),
			wantSpec: map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "batch"}}}},
		},
		{
			name:     "Job with a manual selector is left alone",
			in:       object("batch/v1", "Job", "app", "j", map[string]any{"spec": map[string]any{"manualSelector": true, "selector": selector, "template": jobTemplate()}}),
			wantSpec: map[string]any{"manualSelector": true, "selector": selector, "template": jobTemplate()},
		},
		{
			name:     "a Deployment keeps its selector",
			in:       object("apps/v1", "Deployment", "app", "web", map[string]any{"spec": map[string]any{"selector": selector}}),
			wantSpec: map[string]any{"selector": selector},
		},
		{
			name:     "a Service of another group is not a core Service",
			in:       object("example.com/v1", "Service", "app", "web", map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.1"}}),
			wantSpec: map[string]any{"clusterIP": "10.0.0.1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _ := unstructured.NestedMap(sanitize(tc.in).Object, "spec")
			if !reflect.DeepEqual(got, tc.wantSpec) {
				t.Errorf("spec =\n%v\nwant\n%v", got, tc.wantSpec)
			}
		})
	}
}

func TestSkipKind(t *testing.T) {
	tests := []struct {
		group, kind string
		want        bool
	}{
		{"", "ConfigMap", false},
		{"", "Namespace", false},
		{"apps", "Deployment", false},
		{"apiextensions.k8s.io", "CustomResourceDefinition", false},
		{"example.com", "Widget", false},
		{"", "Pod", true},
		{"", "Event", true},
		{"", "Node", true},
		{"", "Endpoints", true},
		{"", "Binding", true},
		{"", "ComponentStatus", true},
		{"", "PersistentVolumeClaim", true},
		{"events.k8s.io", "Event", true},
		{"coordination.k8s.io", "Lease", true},
		{"metrics.k8s.io", "PodMetrics", true},
		{"authorization.k8s.io", "SubjectAccessReview", true},
		{"authentication.k8s.io", "TokenReview", true},
		{"cluster.kubernetes-fleet.io", "MemberCluster", true},
		{"tenancy.fleetplane.io", "Team", true},
		{"placement.kubernetes-fleet.io", "ClusterResourcePlacement", true},
		{"placement.kubernetes-fleet.io", "ResourcePlacement", true},
		{"placement.kubernetes-fleet.io", "Work", true},
		{"placement.kubernetes-fleet.io", "ClusterResourceSnapshot", true},
		{"placement.kubernetes-fleet.io", "ClusterResourceEnvelope", false},
		{"placement.kubernetes-fleet.io", "ResourceEnvelope", false},
		{"tenancy.kcp.io", "Workspace", true},
		{"apis.kcp.io", "APIBinding", true},
		{"core.kcp.io", "LogicalCluster", true},
	}
	for _, tc := range tests {
		gk := schema.GroupKind{Group: tc.group, Kind: tc.kind}
		if got := skipKind(gk); got != tc.want {
			t.Errorf("skipKind(%s) = %v, want %v", gk, got, tc.want)
		}
	}
}

func TestReservedNamespace(t *testing.T) {
	tests := map[string]bool{
		"default": true, "kcp-system": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
		"fleet-system": true, "fleet-member-m1": true,
		"app": false, "kube": false, "fleet": false, "defaults": false, "my-kube-system": false, "kcp": false,
	}
	for ns, want := range tests {
		if got := reservedNamespace(ns); got != want {
			t.Errorf("reservedNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
}

func TestSkipObject(t *testing.T) {
	owned := func(o *unstructured.Unstructured) *unstructured.Unstructured {
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u"}})
		return o
	}
	tests := []struct {
		name string
		o    *unstructured.Unstructured
		want bool
	}{
		{"a ConfigMap", object("v1", "ConfigMap", "app", "cfg", nil), false},
		{"the kube-root-ca.crt ConfigMap", object("v1", "ConfigMap", "app", "kube-root-ca.crt", nil), true},
		{"a Secret named kube-root-ca.crt", object("v1", "Secret", "app", "kube-root-ca.crt", nil), false},
		{"the default ServiceAccount", object("v1", "ServiceAccount", "app", "default", nil), true},
		{"another ServiceAccount", object("v1", "ServiceAccount", "app", "builder", nil), false},
		{"a ServiceAccount token Secret", object("v1", "Secret", "app", "tok", map[string]any{"type": "kubernetes.io/service-account-token"}), true},
		{"an Opaque Secret", object("v1", "Secret", "app", "pw", map[string]any{"type": "Opaque"}), false},
		{"an owned ReplicaSet", owned(object("apps/v1", "ReplicaSet", "app", "web-1", nil)), true},
		{"a bare ReplicaSet", object("apps/v1", "ReplicaSet", "app", "web-1", nil), false},
		{"an owned ControllerRevision", owned(object("apps/v1", "ControllerRevision", "app", "web-1", nil)), true},
		{"a managed EndpointSlice", withLabels(object("discovery.k8s.io/v1", "EndpointSlice", "app", "web-x", nil),
			map[string]string{"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}), true},
		{"a hand-made EndpointSlice", object("discovery.k8s.io/v1", "EndpointSlice", "app", "web-x", nil), false},
		{"anything in kube-system", object("v1", "ConfigMap", "kube-system", "cfg", nil), true},
		{"anything in a fleet- namespace", object("v1", "ConfigMap", "fleet-system", "cfg", nil), true},
		{"anything in default", object("apps/v1", "Deployment", "default", "web", nil), true},
		{"anything in kcp-system", object("v1", "ConfigMap", "kcp-system", "cfg", nil), true},
		{"a cluster-scoped object", object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader", nil), false},
	}
	for _, tc := range tests {
		if got := skipObject(tc.o); got != tc.want {
			t.Errorf("skipObject(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
