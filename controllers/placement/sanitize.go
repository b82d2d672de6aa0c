package placement

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// skippedGroups hold control-plane or hub-only APIs that never go to members.
var skippedGroups = map[string]bool{
	"cluster.kubernetes-fleet.io": true,
	"tenancy.fleetplane.io":       true,
	"events.k8s.io":               true,
	"coordination.k8s.io":         true,
	"metrics.k8s.io":              true,
	"authentication.k8s.io":       true,
	"authorization.k8s.io":        true,
}

// placeableFleetKinds are the only placement-group kinds that are placed:
// envelopes, whose content is unpacked on the member.
var placeableFleetKinds = map[string]bool{"ClusterResourceEnvelope": true, "ResourceEnvelope": true}

// skippedCoreKinds belong to a cluster's runtime, not to what teams place;
// a PersistentVolumeClaim is bound to one cluster's storage (KubeFleet does
// not place them either).
var skippedCoreKinds = map[string]bool{
	"Event": true, "Pod": true, "Node": true, "Binding": true, "ComponentStatus": true,
	"Endpoints": true, "PersistentVolumeClaim": true,
}

func skipKind(gk schema.GroupKind) bool {
	switch {
	case skippedGroups[gk.Group], strings.HasSuffix(gk.Group, ".kcp.io"):
		return true
	case gk.Group == "placement.kubernetes-fleet.io":
		return !placeableFleetKinds[gk.Kind]
	case gk.Group == "":
		return skippedCoreKinds[gk.Kind]
	}
	return false
}

// ReservedNamespaces are namespaces the fleet never selects: Kubernetes',
// kcp's and the fleet's own.
var ReservedNamespaces = []string{"default", "kcp-system", "kube-*", "fleet-*"}

func reservedNamespace(name string) bool {
	return placementv1beta1.NamespaceMatches(ReservedNamespaces, name)
}

// skipObject drops objects that exist on every cluster or are made by
// controllers from other objects.
func skipObject(o *unstructured.Unstructured) bool {
	gk := o.GroupVersionKind().GroupKind()
	switch {
	case reservedNamespace(o.GetNamespace()):
		return true
	case gk.Group == "" && gk.Kind == "ConfigMap" && o.GetName() == "kube-root-ca.crt":
		return true
	case gk.Group == "" && gk.Kind == "ServiceAccount" && o.GetName() == "default":
		return true
	case gk.Group == "" && gk.Kind == "Secret" && o.Object["type"] == "kubernetes.io/service-account-token":
		return true
	case gk.Group == "apps" && (gk.Kind == "ReplicaSet" || gk.Kind == "ControllerRevision") && len(o.GetOwnerReferences()) > 0:
		return true
	case gk.Group == "discovery.k8s.io" && gk.Kind == "EndpointSlice" && o.GetLabels()["endpointslice.kubernetes.io/managed-by"] != "":
		return true
	}
	return false
}

// droppedAnnotations are written by servers and clients, not by the user.
var droppedAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"deployment.kubernetes.io/revision",
}

// sanitize returns a copy of a hub object fit to be created on a member:
// without status, server-set metadata, owner references, kcp's annotations,
// and fields the member's controllers allocate (Service IPs and node ports,
// Job selectors).
func sanitize(in *unstructured.Unstructured) *unstructured.Unstructured {
	o := in.DeepCopy()
	delete(o.Object, "status")
	meta := o.Object["metadata"].(map[string]any)
	for _, f := range []string{"resourceVersion", "generation", "uid", "selfLink", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "ownerReferences", "finalizers", "generateName"} {
		delete(meta, f)
	}
	annotations := o.GetAnnotations()
	for k := range annotations {
		if strings.Contains(k, "kcp.io/") {
			delete(annotations, k)
		}
	}
	for _, k := range droppedAnnotations {
		delete(annotations, k)
	}
	if len(annotations) == 0 {
		delete(meta, "annotations")
	} else {
		o.SetAnnotations(annotations)
	}
	gk := o.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "" && gk.Kind == "Service":
		sanitizeService(o)
	case gk.Group == "batch" && gk.Kind == "Job":
		sanitizeJob(o)
	}
	return o
}

func sanitizeService(o *unstructured.Unstructured) {
	// "None" is no allocation but what makes a Service headless: it stays.
	if ip, _, _ := unstructured.NestedString(o.Object, "spec", "clusterIP"); ip != "None" {
		unstructured.RemoveNestedField(o.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(o.Object, "spec", "clusterIPs")
	}
	unstructured.RemoveNestedField(o.Object, "spec", "healthCheckNodePort")
	ports, found, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
	if !found {
		return
	}
	for _, p := range ports {
		if pm, ok := p.(map[string]any); ok {
			delete(pm, "nodePort")
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
}

// sanitizeJob drops the selector and labels the Job controller generated;
// a member's Job controller generates its own.
func sanitizeJob(o *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(o.Object, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(o.Object, "spec", "selector")
	for _, k := range []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"} {
		unstructured.RemoveNestedField(o.Object, "spec", "template", "metadata", "labels", k)
	}
}
