package v1beta1

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// Fleetplane's contract between the hub and the member syncers, beyond
// KubeFleet's: which workspace and placement a Work comes from, what the
// syncer may do with it, and how placed objects on a member record who owns
// them. Only the hub's controllers write Work, so the syncer trusts these.
const (
	fleetplanePrefix = "fleetplane.io/"

	// WorkspaceLabel names, on a Work, the logical cluster of the workspace
	// whose placement wrote it: Work from every workspace shares the
	// members' namespaces.
	WorkspaceLabel = fleetplanePrefix + "workspace"
	// WorkspacePathAnnotation is that workspace's path (e.g.
	// root:teams:team-a), for messages.
	WorkspacePathAnnotation = fleetplanePrefix + "workspace-path"
	// UpdateRunAnnotation names, on a binding, the staged update run that
	// last bound it ("ClusterStagedUpdateRun/<name>"), for its
	// RolloutStarted message.
	UpdateRunAnnotation = fleetplanePrefix + "update-run"
	// DeletePropagationAnnotation on a Work being deleted tells the syncer
	// to leave the applied objects on the member ("Abandon") instead of
	// deleting them.
	DeletePropagationAnnotation = fleetplanePrefix + "delete-propagation"
	// PlacementDeleteStrategyAnnotation records, on every Work, its
	// placement's deleteStrategy.propagationPolicy, so that the strategy
	// holds even when the placement is already gone (force-deleted) by the
	// time its Work is removed.
	PlacementDeleteStrategyAnnotation = fleetplanePrefix + "placement-delete-strategy"
	// TenantAnnotation marks the Work of a team workspace ("true"): the
	// syncer then holds it to namespace ownership and never adopts an
	// object no placement of the workspace created, except where the
	// workspace's grants allow takeover.
	TenantAnnotation = fleetplanePrefix + "tenant"
	// TakeOverNamespacesAnnotation lists, comma-separated, the namespace
	// patterns (path.Match syntax) where a team Work may adopt existing
	// objects, as the workspace's ClusterGrants for the member allow.
	TakeOverNamespacesAnnotation = fleetplanePrefix + "take-over-namespaces"
	// TeamAnnotation on a team Work is the logical cluster of the
	// workspace that owns the Work's namespaces on members: the workspace
	// a ClusterGrant names, which is the Work's own or, for a child
	// workspace, the one above it. The workspace's own when absent.
	TeamAnnotation = fleetplanePrefix + "team"
	// TeamPathAnnotation is that workspace's path, for messages.
	TeamPathAnnotation = fleetplanePrefix + "team-path"
	// AllowCustomResourceDefinitionsAnnotation ("true") on a team Work says
	// that a ClusterGrant covering the member lets the workspace place
	// CustomResourceDefinitions; without it the syncer refuses them.
	AllowCustomResourceDefinitionsAnnotation = fleetplanePrefix + "allow-crds"
	// ReservedNamespacesAnnotation lists, comma-separated, the namespace
	// patterns a team Work may not touch beyond those every syncer knows
	// (the hub's --team-reserved-namespaces).
	ReservedNamespacesAnnotation = fleetplanePrefix + "reserved-namespaces"
	// PodSecurityAnnotation on a team Work is the Pod Security Standards
	// level (privileged, baseline or restricted) the workspace's grants set
	// for its namespaces and workloads on the member; baseline when absent.
	PodSecurityAnnotation = fleetplanePrefix + "pod-security"

	// OwnerAnnotation, on a member object, is the identity of the one
	// placement that manages it (see PlacementIdentity). Server-side apply
	// keeps it exclusive: each placement applies it with its own field
	// manager, so a second placement conflicts instead of sharing.
	OwnerAnnotation = fleetplanePrefix + "owner"
	// CreatedByAnnotation, on a member object, is the identity of the
	// placement that created it. Only that placement ever deletes it;
	// objects a placement adopted are released, never deleted.
	CreatedByAnnotation = fleetplanePrefix + "created-by"
	// NamespaceOwnerAnnotation, on a member Namespace, is the logical
	// cluster of the team whose placement created (or, as a grant allowed,
	// adopted) it (see TeamAnnotation); other teams cannot place into it.
	NamespaceOwnerAnnotation = fleetplanePrefix + "namespace-owner"
	// NamespaceOwnerPathAnnotation is that workspace's path, for messages.
	NamespaceOwnerPathAnnotation = fleetplanePrefix + "namespace-owner-path"
	// PlacedLabel ("true"), on a member object, says that a placement
	// manages it. The syncer watches only objects with this label, so its
	// memory follows what the placements put on the member, not what the
	// member holds.
	PlacedLabel = fleetplanePrefix + "placed"
)

// PlacementIdentity names the placement a Work comes from, unique across
// workspaces: <logical cluster>/<name> for a ClusterResourcePlacement,
// <logical cluster>/<namespace>/<name> for a ResourcePlacement.
func PlacementIdentity(workLabels map[string]string) string {
	id := workLabels[WorkspaceLabel]
	if ns := workLabels[ParentNamespaceLabel]; ns != "" {
		id += "/" + ns
	}
	return id + "/" + workLabels[PlacementTrackingLabel]
}

// FieldManager is the server-side-apply field manager of a placement on
// member clusters: one per placement, so that two placements never share
// the fields of one object.
func FieldManager(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return "fleetplane-" + hex.EncodeToString(sum[:10])
}

// NamespaceMatches tells whether a namespace matches one of the patterns
// (path.Match syntax, e.g. "legacy-*").
func NamespaceMatches(patterns []string, namespace string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(strings.TrimSpace(p), namespace); err == nil && ok {
			return true
		}
	}
	return false
}
