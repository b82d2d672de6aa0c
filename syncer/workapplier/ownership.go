package workapplier

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
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
	// team is the logical cluster that owns the placement's namespaces,
	// teamPath its path: the workspace itself, or the team above a child
	// workspace.
	team, teamPath string
	// policy is set on team Works (team workspaces): they keep to the
	// kinds and namespaces a team may place, to namespaces of their own
	// workspace, adopt nothing outside the grants' takeover patterns and
	// run workloads at their Pod Security level.
	policy *teampolicy.Policy
}

// ownerOf reads the Work's origin from what the hub wrote on it. A Work
// without origin labels (written by hand by a cluster admin) is its own
// placement.
func ownerOf(work *placementv1beta1.Work) owner {
	o := owner{
		workspace: work.Labels[placementv1beta1.WorkspaceLabel],
		path:      work.Annotations[placementv1beta1.WorkspacePathAnnotation],
	}
	if p, tenant := teampolicy.FromAnnotations(work.Annotations); tenant {
		o.policy = &p
	}
	o.identity = "work:" + work.Namespace + "/" + work.Name
	if o.workspace != "" {
		o.identity = placementv1beta1.PlacementIdentity(work.Labels)
	}
	o.manager = placementv1beta1.FieldManager(o.identity)
	if o.path == "" {
		o.path = o.workspace
	}
	o.team, o.teamPath = work.Annotations[placementv1beta1.TeamAnnotation], work.Annotations[placementv1beta1.TeamPathAnnotation]
	if o.team == "" {
		o.team, o.teamPath = o.workspace, o.path
	}
	return o
}

func (o owner) tenant() bool { return o.policy != nil }

// mayPlace holds a team Work, before anything is read or written, to what
// a team may place: the kind, its scope as the member serves it, reserved
// namespaces, CRDs only where a grant allows, and its workloads' Pod
// Security level. The hub checked the same; this keeps a hub bug from
// becoming a member write.
func (o owner) mayPlace(obj *unstructured.Unstructured, clusterScoped bool) (string, string, bool) {
	if !o.tenant() {
		return "", "", true
	}
	gk := obj.GroupVersionKind().GroupKind()
	refusal := o.policy.CheckObject(gk, obj.GetNamespace(), obj.GetName(), clusterScoped)
	if refusal == nil {
		refusal = o.policy.CheckWorkload(obj)
	}
	if refusal != nil {
		return refusal.Reason, refusal.Message, false
	}
	return "", "", true
}

// labelNamespace sets the Pod Security labels of a team's Namespace, and
// hashes the manifest again: what is applied, and judged up to date, is the
// namespace as labelled for the grants' current level.
func (o owner) labelNamespace(m *manifest) error {
	if !o.tenant() || !isNamespace(m.obj) {
		return nil
	}
	o.policy.LabelNamespace(m.obj)
	raw, err := json.Marshal(m.obj.Object)
	if err != nil {
		return err
	}
	m.hash = hashOf(raw)
	return nil
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
// Another workspace's namespace is not named: teams do not learn of each
// other.
func (o owner) mayUseNamespace(name string, ns *unstructured.Unstructured) (string, string, bool) {
	if !o.tenant() || ns == nil {
		return "", "", true
	}
	switch ws := ns.GetAnnotations()[placementv1beta1.NamespaceOwnerAnnotation]; {
	case ws == o.team:
		return "", "", true
	case ws != "":
		return placementv1beta1.ApplyResultFailedToTakeOver,
			fmt.Sprintf("namespace %s on this member cluster belongs to another workspace's placements; a team places only into namespaces its own placements created — use another namespace", name), false
	case o.policy.MayTakeOver(schema.GroupKind{Kind: "Namespace"}, "", name, true):
		return "", "", true
	default:
		return placementv1beta1.ApplyResultNotTakenOver,
			fmt.Sprintf("namespace %s already exists on this member cluster and no placement of workspace %s created it; place into a namespace of your own, or ask a platform admin to list it in a ClusterGrant's takeOverNamespaces", name, o.teamPath), false
	}
}

// mayAdopt tells whether a team Work may adopt an object that exists on the
// member and that no placement manages: never a cluster-scoped object but a
// Namespace, never in a reserved namespace.
func (o owner) mayAdopt(obj *unstructured.Unstructured, clusterScoped bool) (string, string, bool) {
	if !o.tenant() || o.policy.MayTakeOver(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName(), clusterScoped) {
		return "", "", true
	}
	return placementv1beta1.ApplyResultNotTakenOver,
		fmt.Sprintf("%s already exists on this member cluster and no placement created it; a team workspace (%s) adopts existing objects only in namespaces a ClusterGrant lists in takeOverNamespaces, and never cluster-scoped objects other than those namespaces", describe(obj), o.path), false
}

// otherPlacement names, in a conflict message, the placement that holds an
// object: by name when it is of the same workspace, without a name when it
// is another team's (the platform's admins see every workspace anyway).
func (o owner) otherPlacement(identity string) string {
	if rest, ok := strings.CutPrefix(identity, o.workspace+"/"); ok && o.workspace != "" {
		return "placement " + rest + " of this workspace"
	}
	if o.tenant() {
		return "a placement of another workspace"
	}
	return "placement " + identity
}

// stamp writes the ownership bookkeeping on an object about to be applied:
// the placement that manages it, whether it created it, for a Namespace
// the workspace it belongs to, and the label the syncer's watches select. These keys are the syncer's alone:
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
	if isNamespace(obj) && o.team != "" {
		annotations[placementv1beta1.NamespaceOwnerAnnotation] = o.team
		annotations[placementv1beta1.NamespaceOwnerPathAnnotation] = o.teamPath
	}
	obj.SetAnnotations(annotations)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[placementv1beta1.PlacedLabel] = "true"
	obj.SetLabels(labels)
}

// placed tells whether the live object carries the label that the syncer's
// watches select: one without it is not seen changing.
func placed(live interface{ GetLabels() map[string]string }) bool {
	return live.GetLabels()[placementv1beta1.PlacedLabel] == "true"
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
