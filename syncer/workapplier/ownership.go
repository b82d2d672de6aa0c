package workapplier

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// owner is who a Work applies objects for: one placement of one workspace,
// and what the hub allows that workspace on this member.
type owner struct {
	// identity names the placement (placementv1beta1.PlacementIdentity);
	// every Work of one placement shares it.
	identity string
	// manager is the placement's server-side-apply field manager.
	manager string
	// workspace is the logical cluster of the placement, path its path.
	workspace, path string
	// tenant Works (team workspaces) keep to namespaces of their own
	// workspace and adopt nothing outside takeOver.
	tenant   bool
	takeOver []string
}

// ownerOf reads the Work's origin from what the hub wrote on it. A Work
// without origin labels (written by hand by a cluster admin) is its own
// placement.
func ownerOf(work *placementv1beta1.Work) owner {
	o := owner{
		workspace: work.Labels[placementv1beta1.WorkspaceLabel],
		path:      work.Annotations[placementv1beta1.WorkspacePathAnnotation],
		tenant:    work.Annotations[placementv1beta1.TenantAnnotation] == "true",
	}
	o.identity = "work:" + work.Namespace + "/" + work.Name
	if o.workspace != "" {
		o.identity = placementv1beta1.PlacementIdentity(work.Labels)
	}
	o.manager = placementv1beta1.FieldManager(o.identity)
	if t := work.Annotations[placementv1beta1.TakeOverNamespacesAnnotation]; t != "" {
		o.takeOver = strings.Split(t, ",")
	}
	if o.path == "" {
		o.path = o.workspace
	}
	return o
}

// clusterScopedForTenants are the only cluster-scoped kinds a team workspace
// may place; the hub allows CRDs only where a grant does.
var clusterScopedForTenants = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
}

// mayPlaceKind refuses, for a team Work, cluster-scoped kinds other than
// Namespaces and CRDs. The hub never sends them; this keeps it so.
func (o owner) mayPlaceKind(gk schema.GroupKind, clusterScoped bool) (string, string, bool) {
	if !o.tenant || !clusterScoped || clusterScopedForTenants[gk] {
		return "", "", true
	}
	return placementv1beta1.ApplyResultFailedToApply,
		fmt.Sprintf("%s is cluster-scoped: a team workspace (%s) may place only Namespaces and, where its ClusterGrant allows, CustomResourceDefinitions", gk, o.path), false
}

// namespaceOf is the namespace an object lives in, or for a Namespace its
// own name: what takeover patterns and namespace ownership are judged by.
func namespaceOf(obj *unstructured.Unstructured) string {
	if isNamespace(obj) {
		return obj.GetName()
	}
	return obj.GetNamespace()
}

// mayUseNamespace applies namespace ownership to a team Work: it places
// only into namespaces its workspace's placements created (or adopted where
// a grant allows). ns is the live namespace, nil if it does not exist yet.
func (o owner) mayUseNamespace(name string, ns *unstructured.Unstructured) (string, string, bool) {
	if !o.tenant || ns == nil {
		return "", "", true
	}
	switch ws := ns.GetAnnotations()[placementv1beta1.NamespaceOwnerAnnotation]; {
	case ws == o.workspace:
		return "", "", true
	case ws != "":
		path := ns.GetAnnotations()[placementv1beta1.NamespaceOwnerPathAnnotation]
		if path == "" {
			path = ws
		}
		return placementv1beta1.ApplyResultFailedToTakeOver,
			fmt.Sprintf("namespace %s on this member cluster belongs to workspace %s; a team places only into namespaces its own placements created — use another namespace", name, path), false
	case placementv1beta1.NamespaceMatches(o.takeOver, name):
		return "", "", true
	default:
		return placementv1beta1.ApplyResultNotTakenOver,
			fmt.Sprintf("namespace %s already exists on this member cluster and no placement of workspace %s created it; place into a namespace of your own, or ask a platform admin to list it in a ClusterGrant's takeOverNamespaces", name, o.path), false
	}
}

// mayAdopt tells whether a team Work may adopt an object that exists on the
// member and that no placement manages.
func (o owner) mayAdopt(obj *unstructured.Unstructured) (string, string, bool) {
	if !o.tenant || placementv1beta1.NamespaceMatches(o.takeOver, namespaceOf(obj)) {
		return "", "", true
	}
	return placementv1beta1.ApplyResultNotTakenOver,
		fmt.Sprintf("%s already exists on this member cluster and no placement created it; a team workspace (%s) adopts existing objects only in namespaces a ClusterGrant lists in takeOverNamespaces", describe(obj), o.path), false
}

// stamp writes the ownership bookkeeping on an object about to be applied:
// the placement that manages it, whether it created it, and for a
// Namespace, the workspace it belongs to. These keys are the syncer's alone:
// whatever a manifest brings under them is dropped first, so that no
// placement can claim, say, to have created an object it adopted (and so
// delete it later).
func (o owner) stamp(obj *unstructured.Unstructured, created bool) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, k := range ownershipAnnotations {
		delete(annotations, k)
	}
	annotations[placementv1beta1.OwnerAnnotation] = o.identity
	if created {
		annotations[placementv1beta1.CreatedByAnnotation] = o.identity
	}
	if isNamespace(obj) && o.workspace != "" {
		annotations[placementv1beta1.NamespaceOwnerAnnotation] = o.workspace
		annotations[placementv1beta1.NamespaceOwnerPathAnnotation] = o.path
	}
	obj.SetAnnotations(annotations)
}

// ownershipAnnotations record on member objects who manages and who created
// them.
var ownershipAnnotations = []string{
	placementv1beta1.OwnerAnnotation, placementv1beta1.CreatedByAnnotation,
	placementv1beta1.NamespaceOwnerAnnotation, placementv1beta1.NamespaceOwnerPathAnnotation,
}

func isNamespace(obj *unstructured.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == schema.GroupKind{Kind: "Namespace"}
}

// bookkeeping are the annotations the syncer writes on placed objects; they
// go when a placement lets go of an object it keeps on the member (not while
// another of its Works still holds it).
var bookkeeping = []string{
	placementv1beta1.OwnerAnnotation, placementv1beta1.CreatedByAnnotation,
	placementv1beta1.ManifestHashAnnotation, placementv1beta1.LastAppliedConfigAnnotation,
}

// createdBy tells whether the placement created the live object.
func (o owner) createdBy(live *unstructured.Unstructured) bool {
	return live.GetAnnotations()[placementv1beta1.CreatedByAnnotation] == o.identity
}

// manages tells whether the placement manages the live object.
func (o owner) manages(live *unstructured.Unstructured) bool {
	return live.GetAnnotations()[placementv1beta1.OwnerAnnotation] == o.identity
}
