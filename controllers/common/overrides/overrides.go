// Package overrides decides which ClusterResourceOverrides and
// ResourceOverrides apply to a placement's resources on a member cluster, and
// applies them. The rollout records the applicable override snapshots on each
// binding (so an override change rolls out like any other change); the work
// generator applies the recorded snapshots to what it writes into the Work.
package overrides

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/internal/manifests"
)

// Set is a set of override snapshots of one workspace.
type Set struct {
	Cluster    []placementv1beta1.ClusterResourceOverrideSnapshot
	Namespaced []placementv1beta1.ResourceOverrideSnapshot
}

// Empty tells whether the set holds no override.
func (s Set) Empty() bool { return len(s.Cluster) == 0 && len(s.Namespaced) == 0 }

// Latest reads the latest snapshot of every override of a workspace.
func Latest(ctx context.Context, c client.Reader) (Set, error) {
	latest := client.MatchingLabels{placementv1beta1.IsLatestSnapshotLabel: "true"}
	cro := &placementv1beta1.ClusterResourceOverrideSnapshotList{}
	if err := c.List(ctx, cro, latest); err != nil {
		return Set{}, err
	}
	ro := &placementv1beta1.ResourceOverrideSnapshotList{}
	if err := c.List(ctx, ro, latest); err != nil {
		return Set{}, err
	}
	return Set{Cluster: cro.Items, Namespaced: ro.Items}, nil
}

// Load reads the snapshots a binding names, in its order.
func Load(ctx context.Context, c client.Reader, cro []string, ro []placementv1beta1.NamespacedName) (Set, error) {
	var s Set
	for _, name := range cro {
		snap := placementv1beta1.ClusterResourceOverrideSnapshot{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &snap); err != nil {
			return Set{}, fmt.Errorf("reading ClusterResourceOverrideSnapshot %s: %w", name, err)
		}
		s.Cluster = append(s.Cluster, snap)
	}
	for _, n := range ro {
		snap := placementv1beta1.ResourceOverrideSnapshot{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: n.Namespace, Name: n.Name}, &snap); err != nil {
			return Set{}, fmt.Errorf("reading ResourceOverrideSnapshot %s/%s: %w", n.Namespace, n.Name, err)
		}
		s.Namespaced = append(s.Namespaced, snap)
	}
	return s, nil
}

// Applicable are the override snapshots that apply on one cluster, by name
// in name order, as a binding records them.
type Applicable struct {
	Cluster    []string
	Namespaced []placementv1beta1.NamespacedName
}

// Equal tells whether two lists name the same snapshots (nil and empty alike).
func (a Applicable) Equal(cro []string, ro []placementv1beta1.NamespacedName) bool {
	if len(a.Cluster) != len(cro) || len(a.Namespaced) != len(ro) {
		return false
	}
	for i := range cro {
		if a.Cluster[i] != cro[i] {
			return false
		}
	}
	for i := range ro {
		if a.Namespaced[i] != ro[i] {
			return false
		}
	}
	return true
}

// Matcher finds the overrides of a set that apply to one placement's
// resources, cluster by cluster.
type Matcher struct {
	cro []placementv1beta1.ClusterResourceOverrideSnapshot
	ro  []placementv1beta1.ResourceOverrideSnapshot
}

// ForPlacement keeps the overrides that concern the placement and select at
// least one of its resources.
func (s Set) ForPlacement(k placements.Key, resources []placementv1beta1.ResourceIdentifier) Matcher {
	var m Matcher
	for _, snap := range s.Cluster {
		spec := snap.Spec.OverrideSpec
		// A ClusterResourceOverride serves ClusterResourcePlacements only.
		if !k.Cluster() || (spec.Placement != nil && spec.Placement.Name != k.Name) {
			continue
		}
		if anyResource(resources, func(id placementv1beta1.ResourceIdentifier) bool {
			return selectedByCluster(spec.ClusterResourceSelectors, id)
		}) {
			m.cro = append(m.cro, snap)
		}
	}
	for _, snap := range s.Namespaced {
		spec := snap.Spec.OverrideSpec
		if !refersTo(spec.Placement, snap.Namespace, k) {
			continue
		}
		if anyResource(resources, func(id placementv1beta1.ResourceIdentifier) bool {
			return selectedByNamespaced(spec.ResourceSelectors, snap.Namespace, id)
		}) {
			m.ro = append(m.ro, snap)
		}
	}
	sort.Slice(m.cro, func(i, j int) bool { return m.cro[i].Name < m.cro[j].Name })
	sort.Slice(m.ro, func(i, j int) bool {
		return m.ro[i].Namespace+"/"+m.ro[i].Name < m.ro[j].Namespace+"/"+m.ro[j].Name
	})
	return m
}

// Empty tells whether no override concerns the placement.
func (m Matcher) Empty() bool { return len(m.cro) == 0 && len(m.ro) == 0 }

// On lists the overrides with a rule for a cluster with these labels.
func (m Matcher) On(clusterLabels map[string]string) Applicable {
	var a Applicable
	for _, snap := range m.cro {
		if anyRuleMatches(snap.Spec.OverrideSpec.Policy, clusterLabels) {
			a.Cluster = append(a.Cluster, snap.Name)
		}
	}
	for _, snap := range m.ro {
		if anyRuleMatches(snap.Spec.OverrideSpec.Policy, clusterLabels) {
			a.Namespaced = append(a.Namespaced, placementv1beta1.NamespacedName{Namespace: snap.Namespace, Name: snap.Name})
		}
	}
	return a
}

// refersTo tells whether a ResourceOverride in namespace ns serves the
// placement: an unset reference serves every placement.
func refersTo(ref *placementv1beta1.PlacementRef, ns string, k placements.Key) bool {
	if ref == nil {
		return true
	}
	if ref.Scope == placementv1beta1.NamespaceScoped {
		return !k.Cluster() && k.Namespace == ns && k.Name == ref.Name
	}
	return k.Cluster() && k.Name == ref.Name
}

func anyResource(ids []placementv1beta1.ResourceIdentifier, f func(placementv1beta1.ResourceIdentifier) bool) bool {
	for _, id := range ids {
		if f(id) {
			return true
		}
	}
	return false
}

// selectedByCluster tells whether a ClusterResourceOverride's selectors pick
// a resource: a cluster-scoped resource by its own name, a namespaced one
// through its namespace.
func selectedByCluster(selectors []placementv1beta1.ResourceSelectorTerm, id placementv1beta1.ResourceIdentifier) bool {
	for _, s := range selectors {
		if id.Namespace == "" && s.Group == id.Group && s.Version == id.Version && s.Kind == id.Kind && s.Name == id.Name {
			return true
		}
		if id.Namespace != "" && s.Group == "" && s.Version == "v1" && s.Kind == "Namespace" && s.Name == id.Namespace {
			return true
		}
	}
	return false
}

// selectedByNamespaced tells whether a ResourceOverride in namespace ns
// picks a resource.
func selectedByNamespaced(selectors []placementv1beta1.ResourceSelector, ns string, id placementv1beta1.ResourceIdentifier) bool {
	if id.Namespace != ns {
		return false
	}
	for _, s := range selectors {
		if s.Group == id.Group && s.Version == id.Version && s.Kind == id.Kind && s.Name == id.Name {
			return true
		}
	}
	return false
}

// anyRuleMatches tells whether a rule of the policy selects the cluster.
func anyRuleMatches(policy *placementv1beta1.OverridePolicy, clusterLabels map[string]string) bool {
	if policy == nil {
		return false
	}
	for _, rule := range policy.OverrideRules {
		if ruleMatches(rule, clusterLabels) {
			return true
		}
	}
	return false
}

// ruleMatches: an unset cluster selector selects no cluster, one without
// terms every cluster; terms are ORed, and a term without a label selector
// selects nothing.
func ruleMatches(rule placementv1beta1.OverrideRule, clusterLabels map[string]string) bool {
	if rule.ClusterSelector == nil {
		return false
	}
	if len(rule.ClusterSelector.ClusterSelectorTerms) == 0 {
		return true
	}
	for _, term := range rule.ClusterSelector.ClusterSelectorTerms {
		if term.LabelSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err == nil && sel.Matches(labels.Set(clusterLabels)) {
			return true
		}
	}
	return false
}

// Identify reads the identifier of a manifest, with exact keys.
func Identify(raw []byte) (placementv1beta1.ResourceIdentifier, error) {
	head, err := manifests.ReadHead(raw)
	if err != nil {
		return placementv1beta1.ResourceIdentifier{}, err
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return placementv1beta1.ResourceIdentifier{}, err
	}
	return placementv1beta1.ResourceIdentifier{Group: gv.Group, Version: gv.Version, Kind: head.Kind, Name: head.Name, Namespace: head.Namespace}, nil
}

// Cluster is what an override may read of the member cluster it renders for.
type Cluster struct {
	Name   string
	Labels map[string]string
}

// Apply renders one manifest for a cluster: the ClusterResourceOverrides
// first, then the ResourceOverrides, so that a ResourceOverride wins. It
// returns nil when a Delete rule keeps the resource off the cluster.
func (s Set) Apply(raw []byte, cluster Cluster) ([]byte, error) {
	id, err := Identify(raw)
	if err != nil {
		return nil, fmt.Errorf("reading a selected resource: %w", err)
	}
	for _, snap := range s.Cluster {
		if !selectedByCluster(snap.Spec.OverrideSpec.ClusterResourceSelectors, id) {
			continue
		}
		if raw, err = applyPolicy(raw, snap.Spec.OverrideSpec.Policy, cluster); err != nil || raw == nil {
			return nil, describe(err, "ClusterResourceOverride", snap.Labels[placementv1beta1.OverrideTrackingLabel], snap.Name, id)
		}
	}
	for _, snap := range s.Namespaced {
		if !selectedByNamespaced(snap.Spec.OverrideSpec.ResourceSelectors, snap.Namespace, id) {
			continue
		}
		if raw, err = applyPolicy(raw, snap.Spec.OverrideSpec.Policy, cluster); err != nil || raw == nil {
			return nil, describe(err, "ResourceOverride", snap.Namespace+"/"+snap.Labels[placementv1beta1.OverrideTrackingLabel], snap.Name, id)
		}
	}
	return raw, nil
}

func describe(err error, kind, override, snapshot string, id placementv1beta1.ResourceIdentifier) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s (snapshot %s) on %s: %w", kind, override, snapshot, describeID(id), err)
}

func describeID(id placementv1beta1.ResourceIdentifier) string {
	gvk := schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}
	name := id.Name
	if id.Namespace != "" {
		name = id.Namespace + "/" + id.Name
	}
	return fmt.Sprintf("%s %s %s", gvk.GroupVersion(), gvk.Kind, name)
}

// applyPolicy applies every rule that selects the cluster, in order.
func applyPolicy(raw []byte, policy *placementv1beta1.OverridePolicy, cluster Cluster) ([]byte, error) {
	if policy == nil {
		return raw, nil
	}
	for i, rule := range policy.OverrideRules {
		if !ruleMatches(rule, cluster.Labels) {
			continue
		}
		if rule.OverrideType == placementv1beta1.DeleteOverrideType {
			return nil, nil
		}
		for j, op := range rule.JSONPatchOverrides {
			var err error
			if raw, err = applyPatch(raw, op, cluster); err != nil {
				return nil, fmt.Errorf("overrideRules[%d].jsonPatchOverrides[%d] (%s %s): %w", i, j, op.Operator, op.Path, err)
			}
		}
	}
	return raw, nil
}

// applyPatch applies one RFC 6902 operation, its variables substituted.
func applyPatch(raw []byte, op placementv1beta1.JSONPatchOverride, cluster Cluster) ([]byte, error) {
	if err := ValidateOperation(op); err != nil {
		return nil, err
	}
	entry := map[string]any{"op": string(op.Operator), "path": op.Path}
	if op.Operator != placementv1beta1.JSONPatchOverrideOpRemove {
		value, err := substitute(op.Value.Raw, cluster)
		if err != nil {
			return nil, err
		}
		entry["value"] = json.RawMessage(value)
	}
	doc, err := json.Marshal([]any{entry})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(doc)
	if err != nil {
		return nil, err
	}
	return patch.Apply(raw)
}

// ValidateOperation checks what the schema cannot: a value goes with add and
// replace, and never with remove. It checks the path as the schema does
// too, for overrides stored before the schema did.
func ValidateOperation(op placementv1beta1.JSONPatchOverride) error {
	if err := ValidatePath(op.Path); err != nil {
		return err
	}
	hasValue := len(op.Value.Raw) > 0
	switch {
	case op.Operator == placementv1beta1.JSONPatchOverrideOpRemove && hasValue:
		return fmt.Errorf("a remove operation takes no value: delete the value of the %s operation on %s", op.Operator, op.Path)
	case op.Operator != placementv1beta1.JSONPatchOverrideOpRemove && !hasValue:
		return fmt.Errorf("an %s operation needs a value: set the value of the operation on %s", op.Operator, op.Path)
	}
	return nil
}

// ValidatePath refuses a path that could change what object a manifest is
// or fake its state: /kind, /apiVersion and /status, and everything under
// /metadata but labels and annotations, in any letter case (the member
// reads keys exactly; a loose reader could take "/Kind" for the kind).
func ValidatePath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q must be a JSON pointer starting with '/'", p)
	}
	first, rest, _ := strings.Cut(p[1:], "/")
	switch strings.ToLower(first) {
	case "kind", "apiversion", "status":
		return fmt.Errorf("path %s targets %s, which an override cannot change (in any letter case)", p, first)
	case "metadata":
		field, _, _ := strings.Cut(rest, "/")
		if first != "metadata" || (field != "labels" && field != "annotations") {
			return fmt.Errorf("path %s is under /metadata, where an override can only target /metadata/labels or /metadata/annotations, spelled exactly", p)
		}
	}
	return nil
}

const clusterNameVariable = "${MEMBER-CLUSTER-NAME}"

var labelVariable = regexp.MustCompile(`\$\{MEMBER-CLUSTER-LABEL-KEY-([^}]+)\}`)

// substitute replaces ${MEMBER-CLUSTER-NAME} and
// ${MEMBER-CLUSTER-LABEL-KEY-<key>} in a value; a label the cluster does not
// have is an error.
func substitute(value []byte, cluster Cluster) ([]byte, error) {
	out := strings.ReplaceAll(string(value), clusterNameVariable, cluster.Name)
	var missing []string
	out = labelVariable.ReplaceAllStringFunc(out, func(v string) string {
		key := labelVariable.FindStringSubmatch(v)[1]
		label, ok := cluster.Labels[key]
		if !ok {
			missing = append(missing, key)
		}
		return label
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("member cluster %s has no label %s, which the value uses (${MEMBER-CLUSTER-LABEL-KEY-%s}): label the cluster or change the override", cluster.Name, strings.Join(missing, ", "), missing[0])
	}
	return []byte(out), nil
}
