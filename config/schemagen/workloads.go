package main

import (
	"strings"

	"github.com/kcp-dev/kcp/pkg/virtual/framework/internalapis"
	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// workloadAPIs are the standard Kubernetes kinds a team can store in its
// workspace and place on member clusters. kcp itself serves namespaces,
// configmaps, secrets, service accounts and RBAC; these complete the set.
var workloadAPIs = []internalapis.InternalAPI{
	workloadAPI(appsv1.SchemeGroupVersion, "Deployment", "deployments", []string{"deploy"}, &appsv1.Deployment{}, true),
	workloadAPI(appsv1.SchemeGroupVersion, "StatefulSet", "statefulsets", []string{"sts"}, &appsv1.StatefulSet{}, true),
	workloadAPI(appsv1.SchemeGroupVersion, "DaemonSet", "daemonsets", []string{"ds"}, &appsv1.DaemonSet{}, true),
	workloadAPI(appsv1.SchemeGroupVersion, "ReplicaSet", "replicasets", []string{"rs"}, &appsv1.ReplicaSet{}, true),
	workloadAPI(batchv1.SchemeGroupVersion, "Job", "jobs", nil, &batchv1.Job{}, true),
	workloadAPI(batchv1.SchemeGroupVersion, "CronJob", "cronjobs", []string{"cj"}, &batchv1.CronJob{}, true),
	workloadAPI(corev1.SchemeGroupVersion, "Service", "services", []string{"svc"}, &corev1.Service{}, true),
	workloadAPI(corev1.SchemeGroupVersion, "PersistentVolumeClaim", "persistentvolumeclaims", []string{"pvc"}, &corev1.PersistentVolumeClaim{}, true),
	workloadAPI(corev1.SchemeGroupVersion, "LimitRange", "limitranges", []string{"limits"}, &corev1.LimitRange{}, false),
	workloadAPI(networkingv1.SchemeGroupVersion, "Ingress", "ingresses", []string{"ing"}, &networkingv1.Ingress{}, true),
	workloadAPI(networkingv1.SchemeGroupVersion, "NetworkPolicy", "networkpolicies", []string{"netpol"}, &networkingv1.NetworkPolicy{}, false),
	clusterWorkloadAPI(networkingv1.SchemeGroupVersion, "IngressClass", "ingressclasses", nil, &networkingv1.IngressClass{}),
	workloadAPI(policyv1.SchemeGroupVersion, "PodDisruptionBudget", "poddisruptionbudgets", []string{"pdb"}, &policyv1.PodDisruptionBudget{}, true),
	workloadAPI(autoscalingv2.SchemeGroupVersion, "HorizontalPodAutoscaler", "horizontalpodautoscalers", []string{"hpa"}, &autoscalingv2.HorizontalPodAutoscaler{}, true),
	clusterWorkloadAPI(schedulingv1.SchemeGroupVersion, "PriorityClass", "priorityclasses", []string{"pc"}, &schedulingv1.PriorityClass{}),
	clusterWorkloadAPI(storagev1.SchemeGroupVersion, "StorageClass", "storageclasses", []string{"sc"}, &storagev1.StorageClass{}),
}

func workloadAPI(gv schema.GroupVersion, kind, plural string, short []string, obj runtime.Object, status bool) internalapis.InternalAPI {
	return internalapis.InternalAPI{
		Names:         names(kind, plural, short),
		GroupVersion:  gv,
		Instance:      obj,
		ResourceScope: apiextensionsv1.NamespaceScoped,
		HasStatus:     status,
	}
}

func clusterWorkloadAPI(gv schema.GroupVersion, kind, plural string, short []string, obj runtime.Object) internalapis.InternalAPI {
	api := workloadAPI(gv, kind, plural, short, obj, false)
	api.ResourceScope = apiextensionsv1.ClusterScoped
	return api
}

func names(kind, plural string, short []string) apiextensionsv1.CustomResourceDefinitionNames {
	return apiextensionsv1.CustomResourceDefinitionNames{
		Kind:       kind,
		ListKind:   kind + "List",
		Plural:     plural,
		Singular:   strings.ToLower(kind),
		ShortNames: short,
		Categories: []string{"all"},
	}
}

// upstreamAPIs is where the approved definitions of the workload kinds live.
const upstreamAPIs = "https://github.com/kubernetes/kubernetes/tree/v1.32.3/staging/src/k8s.io/api"

// scalable kinds get the scale subresource so `kubectl scale` works on the hub.
var scalable = map[string]bool{"Deployment": true, "StatefulSet": true, "ReplicaSet": true}

// printerColumns make `kubectl get` on the hub look like it does on a cluster,
// as far as the stored spec allows (the hub runs no workload controllers).
var printerColumns = map[string][]apiextensionsv1.CustomResourceColumnDefinition{
	"Deployment":  replicaColumns(),
	"StatefulSet": replicaColumns(),
	"ReplicaSet":  replicaColumns(),
	"Service": {
		{Name: "Type", Type: "string", JSONPath: ".spec.type"},
		{Name: "Ports", Type: "string", JSONPath: ".spec.ports[*].port"},
	},
	"Job":     {{Name: "Completions", Type: "integer", JSONPath: ".spec.completions"}},
	"CronJob": {{Name: "Schedule", Type: "string", JSONPath: ".spec.schedule"}, {Name: "Suspend", Type: "boolean", JSONPath: ".spec.suspend"}},
	"Ingress": {{Name: "Class", Type: "string", JSONPath: ".spec.ingressClassName"}, {Name: "Hosts", Type: "string", JSONPath: ".spec.rules[*].host"}},
}

func replicaColumns() []apiextensionsv1.CustomResourceColumnDefinition {
	return []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Images", Type: "string", JSONPath: ".spec.template.spec.containers[*].image", Priority: 1},
	}
}

func decorateWorkloadSchema(s *apisv1alpha1.APIResourceSchema) error {
	kind := s.Spec.Names.Kind
	// *.k8s.io groups are protected; these schemas are the upstream APIs.
	s.Annotations = map[string]string{apiextensionsv1.KubeAPIApprovedAnnotation: upstreamAPIs}
	for i := range s.Spec.Versions {
		v := &s.Spec.Versions[i]
		if err := fixListTypes(v); err != nil {
			return err
		}
		if scalable[kind] {
			v.Subresources.Scale = &apiextensionsv1.CustomResourceSubresourceScale{
				SpecReplicasPath:   ".spec.replicas",
				StatusReplicasPath: ".status.replicas",
			}
		}
		cols := append([]apiextensionsv1.CustomResourceColumnDefinition{}, printerColumns[kind]...)
		v.AdditionalPrinterColumns = append(cols, apiextensionsv1.CustomResourceColumnDefinition{
			Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
		})
	}
	return nil
}

// fixListTypes drops list-map keys from lists the OpenAPI marks atomic (e.g.
// Job status conditions): structural schemas only allow keys on map lists.
func fixListTypes(v *apisv1alpha1.APIResourceVersion) error {
	props, err := v.GetSchema()
	if err != nil {
		return err
	}
	walkSchema(props, func(p *apiextensionsv1.JSONSchemaProps) {
		if p.XListType != nil && *p.XListType != "map" {
			p.XListMapKeys = nil
		}
	})
	return v.SetSchema(props)
}

func walkSchema(p *apiextensionsv1.JSONSchemaProps, fn func(*apiextensionsv1.JSONSchemaProps)) {
	if p == nil {
		return
	}
	fn(p)
	for k, child := range p.Properties {
		walkSchema(&child, fn)
		p.Properties[k] = child
	}
	if p.Items != nil {
		walkSchema(p.Items.Schema, fn)
	}
	if p.AdditionalProperties != nil {
		walkSchema(p.AdditionalProperties.Schema, fn)
	}
}
