// Package availability decides whether an object applied to a member cluster
// is available, per kind, the way the fleet documents it: workloads when all
// their pods are ready and updated, Jobs once a pod succeeded or is ready,
// Services once they got an address, data-only kinds at once, and anything
// else is not trackable (the rollout then waits unavailablePeriodSeconds).
package availability

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Result is the outcome of an availability check.
type Result int

const (
	// NotYetAvailable means the object is tracked and not available yet.
	NotYetAvailable Result = iota
	// Available means the object is tracked and available.
	Available
	// NotTrackable means the fleet cannot tell; it counts as available
	// after the placement's unavailablePeriodSeconds.
	NotTrackable
)

// dataOnly kinds hold data and are available as soon as they exist.
var dataOnly = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:                                              true,
	{Kind: "Secret"}:                                                 true,
	{Kind: "ConfigMap"}:                                              true,
	{Kind: "ServiceAccount"}:                                         true,
	{Kind: "LimitRange"}:                                             true,
	{Kind: "ResourceQuota"}:                                          true,
	{Kind: "PersistentVolume"}:                                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:               true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                     true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                       true,
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:            true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:              true,
	{Group: "apps", Kind: "ControllerRevision"}:                      true,
}

type checker func(obj *unstructured.Unstructured) (Result, string, error)

var checkers = map[schema.GroupKind]checker{
	{Group: "apps", Kind: "Deployment"}:                               typed(deployment),
	{Group: "apps", Kind: "StatefulSet"}:                              typed(statefulSet),
	{Group: "apps", Kind: "DaemonSet"}:                                typed(daemonSet),
	{Group: "batch", Kind: "Job"}:                                     typed(job),
	{Kind: "Service"}:                                                 typed(service),
	{Group: "policy", Kind: "PodDisruptionBudget"}:                    typed(podDisruptionBudget),
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: typed(customResourceDefinition),
}

// Check tells whether obj, as read from the member cluster, is available, and
// a message saying why when it is not.
func Check(obj *unstructured.Unstructured) (Result, string, error) {
	gk := obj.GroupVersionKind().GroupKind()
	if dataOnly[gk] {
		return Available, "", nil
	}
	if check, ok := checkers[gk]; ok {
		return check(obj)
	}
	return NotTrackable, fmt.Sprintf("the availability of %s objects is not trackable", gk.Kind), nil
}

// typed adapts a check on a typed object to unstructured input.
func typed[T any, P interface {
	*T
	runtime.Object
}](check func(P) (Result, string)) checker {
	return func(obj *unstructured.Unstructured) (Result, string, error) {
		typed := P(new(T))
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
			return NotYetAvailable, "", fmt.Errorf("reading %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		r, msg := check(typed)
		return r, msg, nil
	}
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func deployment(d *appsv1.Deployment) (Result, string) {
	want := replicas(d.Spec.Replicas)
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return NotYetAvailable, "the deployment controller has not observed the latest spec yet"
	case s.UpdatedReplicas < want || s.Replicas > want:
		return NotYetAvailable, fmt.Sprintf("%d of %d pods updated, %d pods in total", s.UpdatedReplicas, want, s.Replicas)
	case s.AvailableReplicas < want:
		return NotYetAvailable, fmt.Sprintf("%d of %d pods available", s.AvailableReplicas, want)
	}
	return Available, ""
}

func statefulSet(ss *appsv1.StatefulSet) (Result, string) {
	want := replicas(ss.Spec.Replicas)
	s := ss.Status
	switch {
	case s.ObservedGeneration < ss.Generation:
		return NotYetAvailable, "the statefulset controller has not observed the latest spec yet"
	case s.UpdatedReplicas < want || (s.UpdateRevision != "" && s.CurrentRevision != s.UpdateRevision):
		return NotYetAvailable, fmt.Sprintf("%d of %d pods on the latest revision", s.UpdatedReplicas, want)
	case s.AvailableReplicas < want:
		return NotYetAvailable, fmt.Sprintf("%d of %d pods available", s.AvailableReplicas, want)
	}
	return Available, ""
}

func daemonSet(ds *appsv1.DaemonSet) (Result, string) {
	s := ds.Status
	switch {
	case s.ObservedGeneration < ds.Generation:
		return NotYetAvailable, "the daemonset controller has not observed the latest spec yet"
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return NotYetAvailable, fmt.Sprintf("%d of %d pods updated", s.UpdatedNumberScheduled, s.DesiredNumberScheduled)
	case s.NumberAvailable < s.DesiredNumberScheduled:
		return NotYetAvailable, fmt.Sprintf("%d of %d pods available", s.NumberAvailable, s.DesiredNumberScheduled)
	}
	return Available, ""
}

func job(j *batchv1.Job) (Result, string) {
	ready := int32(0)
	if j.Status.Ready != nil {
		ready = *j.Status.Ready
	}
	if j.Status.Succeeded > 0 || ready > 0 {
		return Available, ""
	}
	return NotYetAvailable, "no pod of the job has succeeded or is ready yet"
}

func service(svc *corev1.Service) (Result, string) {
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		return NotTrackable, "the availability of ExternalName services is not trackable"
	case corev1.ServiceTypeLoadBalancer:
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" || ing.Hostname != "" {
				return Available, ""
			}
		}
		return NotYetAvailable, "no load balancer ingress has been assigned yet"
	}
	if svc.Spec.ClusterIP == "" && len(svc.Spec.ClusterIPs) == 0 {
		return NotYetAvailable, "no cluster IP has been assigned yet"
	}
	return Available, ""
}

func podDisruptionBudget(pdb *policyv1.PodDisruptionBudget) (Result, string) {
	s := pdb.Status
	if s.ObservedGeneration < pdb.Generation {
		return NotYetAvailable, "the disruption controller has not observed the latest spec yet"
	}
	if s.CurrentHealthy < s.DesiredHealthy {
		return NotYetAvailable, fmt.Sprintf("%d of %d desired pods healthy", s.CurrentHealthy, s.DesiredHealthy)
	}
	return Available, ""
}

func customResourceDefinition(crd *apiextensionsv1.CustomResourceDefinition) (Result, string) {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return Available, ""
		}
	}
	return NotYetAvailable, "the CRD is not established yet"
}
