package teampolicy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

var (
	configMapGK = schema.GroupKind{Kind: "ConfigMap"}
	webhookGK   = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}
)

func TestCheckObject(t *testing.T) {
	p := Policy{ReservedNamespaces: []string{"platform-*"}}
	tests := []struct {
		name          string
		gk            schema.GroupKind
		namespace     string
		objName       string
		clusterScoped bool
		policy        Policy
		want          string // "" means allowed
	}{
		{"a namespace", namespaceGK, "", "web", true, p, ""},
		{"a namespaced object", configMapGK, "web", "c", false, p, ""},
		{"kube-system", namespaceGK, "", "kube-system", true, p, "namespace kube-system is reserved"},
		{"kube-bar", namespaceGK, "", "kube-bar", true, p, "namespace kube-bar is reserved"},
		{"default", namespaceGK, "", "default", true, p, "namespace default is reserved"},
		{"kcp-x", namespaceGK, "", "kcp-x", true, p, "is reserved"},
		{"a hub-reserved namespace", namespaceGK, "", "platform-a", true, p, "namespace platform-a is reserved"},
		{"an object in fleet-system", configMapGK, "fleet-system", "c", false, p, "is in namespace fleet-system, which is reserved"},
		{"a CRD without a grant", crdGK, "", "w.example.com", true, p, "no ClusterGrant"},
		{"a CRD with a grant", crdGK, "", "w.example.com", true, Policy{CustomResourceDefinitions: true}, ""},
		{"a webhook", webhookGK, "", "w", true, Policy{CustomResourceDefinitions: true}, "MutatingWebhookConfiguration w is cluster-scoped"},
		{"a namespaced kind without a namespace", configMapGK, "", "c", false, p, "names no namespace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.policy.CheckObject(tc.gk, tc.namespace, tc.objName, tc.clusterScoped)
			switch {
			case tc.want == "" && r != nil:
				t.Errorf("refused: %v", r)
			case tc.want != "" && (r == nil || !strings.Contains(r.Message, tc.want) || r.Reason != placementv1beta1.ApplyResultFailedToApply):
				t.Errorf("= %v, want a refusal with %q", r, tc.want)
			}
		})
	}
}

func TestMayTakeOver(t *testing.T) {
	all := Policy{TakeOverNamespaces: []string{"*"}}
	legacy := Policy{TakeOverNamespaces: []string{"legacy-*"}}
	tests := []struct {
		name          string
		policy        Policy
		gk            schema.GroupKind
		namespace     string
		objName       string
		clusterScoped bool
		want          bool
	}{
		{"in a listed namespace", legacy, configMapGK, "legacy-a", "c", false, true},
		{"elsewhere", legacy, configMapGK, "app", "c", false, false},
		{"a listed Namespace itself", legacy, namespaceGK, "", "legacy-a", true, true},
		{"a CRD under *", all, crdGK, "", "w.example.com", true, false},
		{"a webhook under *", all, webhookGK, "", "w", true, false},
		{"a cluster-scoped kind given a namespace", all, webhookGK, "app", "w", true, false},
		{"a reserved namespace under *", all, namespaceGK, "", "kube-system", true, false},
		{"an object in a reserved namespace under *", all, configMapGK, "default", "c", false, false},
	}
	for _, tc := range tests {
		if got := tc.policy.MayTakeOver(tc.gk, tc.namespace, tc.objName, tc.clusterScoped); got != tc.want {
			t.Errorf("%s: MayTakeOver = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClusterScoped(t *testing.T) {
	if !ClusterScoped(namespaceGK, "app") || !ClusterScoped(webhookGK, "app") || !ClusterScoped(configMapGK, "") || ClusterScoped(configMapGK, "app") {
		t.Error("built-in cluster-scoped kinds are cluster-scoped whatever namespace they carry; others are when they name none")
	}
}

func TestAnnotationsRoundTrip(t *testing.T) {
	p := Policy{ReservedNamespaces: []string{"platform-*"}, CustomResourceDefinitions: true, TakeOverNamespaces: []string{"legacy-*", "old"}, PodSecurity: LevelPrivileged}
	got, tenant := FromAnnotations(p.Annotations())
	if !tenant || got.PodSecurity != LevelPrivileged || !got.CustomResourceDefinitions || len(got.TakeOverNamespaces) != 2 || got.ReservedNamespaces[0] != "platform-*" {
		t.Errorf("round trip = %+v, %v", got, tenant)
	}
	if _, tenant := FromAnnotations(map[string]string{}); tenant {
		t.Error("a Work without the tenant annotation is the platform's")
	}
	a := Policy{}.Annotations()
	a[placementv1beta1.PodSecurityAnnotation] = "nonsense"
	if got, _ := FromAnnotations(a); got.PodSecurity != LevelRestricted || got.CustomResourceDefinitions {
		t.Errorf("an unreadable level is the strictest: %+v", got)
	}
	delete(a, placementv1beta1.PodSecurityAnnotation)
	if got, _ := FromAnnotations(a); got.PodSecurity != LevelBaseline {
		t.Errorf("no level is baseline: %+v", got)
	}
}

func workload(kind, apiVersion string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "w", "namespace": "app"}}}
	for k, v := range spec {
		u.Object[k] = v
	}
	return u
}

func podSpec(extra map[string]any) map[string]any {
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}
	for k, v := range extra {
		spec[k] = v
	}
	return spec
}

func template(extra map[string]any) map[string]any {
	return map[string]any{"template": map[string]any{"spec": podSpec(extra)}}
}

func TestCheckWorkload(t *testing.T) {
	privileged := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx", "securityContext": map[string]any{"privileged": true}}}}
	hostPath := map[string]any{"volumes": []any{map[string]any{"name": "root", "hostPath": map[string]any{"path": "/"}}}}
	tests := []struct {
		name  string
		obj   *unstructured.Unstructured
		level Level
		want  string // "" means allowed
	}{
		{"a plain Deployment", workload("Deployment", "apps/v1", map[string]any{"spec": template(nil)}), LevelBaseline, ""},
		{"a privileged Deployment", workload("Deployment", "apps/v1", map[string]any{"spec": template(privileged)}), LevelBaseline, "privileged"},
		{"a privileged Deployment, granted privileged", workload("Deployment", "apps/v1", map[string]any{"spec": template(privileged)}), LevelPrivileged, ""},
		{"hostNetwork in a DaemonSet", workload("DaemonSet", "apps/v1", map[string]any{"spec": template(map[string]any{"hostNetwork": true})}), LevelBaseline, "host namespaces"},
		{"hostPID in a StatefulSet", workload("StatefulSet", "apps/v1", map[string]any{"spec": template(map[string]any{"hostPID": true})}), LevelBaseline, "host namespaces"},
		{"hostPath in a Job", workload("Job", "batch/v1", map[string]any{"spec": template(hostPath)}), LevelBaseline, "hostPath volumes"},
		{"hostPath in a CronJob", workload("CronJob", "batch/v1", map[string]any{"spec": map[string]any{"jobTemplate": map[string]any{"spec": template(hostPath)}}}), LevelBaseline, "hostPath volumes"},
		{"a privileged Pod", workload("Pod", "v1", map[string]any{"spec": privileged}), LevelBaseline, "privileged"},
		{"a plain Pod under restricted", workload("Pod", "v1", map[string]any{"spec": podSpec(nil)}), LevelRestricted, "Pod Security level \"restricted\""},
		{"a system priority class", workload("Deployment", "apps/v1", map[string]any{"spec": template(map[string]any{"priorityClassName": "system-node-critical"})}), LevelBaseline, "priority class system-node-critical"},
		{"a Service with externalIPs", workload("Service", "v1", map[string]any{"spec": map[string]any{"externalIPs": []any{"1.2.3.4"}}}), LevelBaseline, "spec.externalIPs"},
		{"a Service with externalIPs, granted privileged", workload("Service", "v1", map[string]any{"spec": map[string]any{"externalIPs": []any{"1.2.3.4"}}}), LevelPrivileged, ""},
		{"a template that is not an object", workload("Deployment", "apps/v1", map[string]any{"spec": map[string]any{"template": "x"}}), LevelBaseline, "spec.template is not an object"},
		{"a ConfigMap", workload("ConfigMap", "v1", nil), LevelRestricted, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Policy{PodSecurity: tc.level}.CheckWorkload(tc.obj)
			switch {
			case tc.want == "" && r != nil:
				t.Errorf("refused: %v", r)
			case tc.want != "" && (r == nil || !strings.Contains(r.Message, tc.want)):
				t.Errorf("= %v, want a refusal with %q", r, tc.want)
			}
		})
	}
}
