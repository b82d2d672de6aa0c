package placement

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// kindOrder is the order in which KubeFleet lists selected resources (and
// Helm installs them): what others depend on first. Kinds not listed come
// after all of these.
var kindOrder = func() map[string]int {
	kinds := []string{
		"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
		"ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
		"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList",
		"Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
		"ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
		"APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
	}
	order := make(map[string]int, len(kinds))
	for i, k := range kinds {
		order[k] = i
	}
	return order
}()

// sortSelected orders a placement's selectedResources as KubeFleet does, so
// that tools reading the status see the same list: by kind in kindOrder,
// then by group and version, then by namespace and name; kinds outside
// kindOrder last, by group, version and kind. (Snapshots keep their own
// order: changing it would re-snapshot every placement.)
func sortSelected(ids []placementv1beta1.ResourceIdentifier) {
	slices.SortStableFunc(ids, func(a, b placementv1beta1.ResourceIdentifier) int {
		oa, aKnown := kindOrder[a.Kind]
		ob, bKnown := kindOrder[b.Kind]
		switch {
		case aKnown && !bKnown:
			return -1
		case !aKnown && bKnown:
			return 1
		case aKnown && oa != ob:
			return cmp.Compare(oa, ob)
		}
		ka, kb := groupVersionOf(a).String(), groupVersionOf(b).String()
		if !aKnown {
			ka, kb = groupVersionOf(a).WithKind(a.Kind).String(), groupVersionOf(b).WithKind(b.Kind).String()
		}
		return cmp.Or(cmp.Compare(ka, kb), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
}

func groupVersionOf(id placementv1beta1.ResourceIdentifier) schema.GroupVersion {
	return schema.GroupVersion{Group: id.Group, Version: id.Version}
}
