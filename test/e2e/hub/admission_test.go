package hub

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// invalidCase is an object admission must reject. When old is set, old is
// created first and obj is applied as an update of it.
type invalidCase struct {
	old, obj string
	// fleet runs the case in root:fleet (MemberCluster) instead of a team workspace.
	fleet bool
	// want are substrings of the error: the field path and the rule.
	want []string
}

const selectNS = `
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: app}`

// crp renders a ClusterResourcePlacement with the given name and extra spec YAML.
func crp(name, spec string) string {
	return fmt.Sprintf("apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\nmetadata: {name: %s}\nspec:%s", name, spec)
}

func rp(name, spec string) string {
	return fmt.Sprintf("apiVersion: placement.kubernetes-fleet.io/v1\nkind: ResourcePlacement\nmetadata: {name: %s, namespace: app}\nspec:%s", name, spec)
}

func obj(kind, name, spec string) string {
	return fmt.Sprintf("apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: %s\nmetadata: {name: %s}\nspec:%s", kind, name, spec)
}

func nsObj(kind, name, spec string) string {
	return fmt.Sprintf("apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: %s\nmetadata: {name: %s, namespace: app}\nspec:%s", kind, name, spec)
}

func memberCluster(name, spec string) string {
	return fmt.Sprintf("apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: %s}\nspec:%s", name, spec)
}

const identity = `
  identity: {kind: ServiceAccount, name: syncer, namespace: fleet-system, apiGroup: ""}`

func selectors(n int) string {
	var b strings.Builder
	b.WriteString("\n  resourceSelectors:")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\n  - {group: \"\", version: v1, kind: ConfigMap, name: cm-%d}", i)
	}
	return b.String()
}

func clusterNames(n int) string {
	var b strings.Builder
	b.WriteString("\n    clusterNames:")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\n    - member-%d", i)
	}
	return b.String()
}

func tolerations(n int) string {
	var b strings.Builder
	b.WriteString("\n    tolerations:")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\n    - {key: k%d, operator: Exists}", i)
	}
	return b.String()
}

func terms(n int) string {
	var b strings.Builder
	b.WriteString("\n    affinity:\n      clusterAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          clusterSelectorTerms:")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\n          - labelSelector: {matchLabels: {env: e%d}}", i)
	}
	return b.String()
}

var invalidCases = []TableEntry{
	// Placement type rules.
	Entry("PickN without numberOfClusters", invalidCase{obj: crp("pickn-no-count", selectNS+`
  policy: {placementType: PickN}`), want: []string{"spec.policy", "numberOfClusters is required when placementType is PickN"}}),
	Entry("PickN with clusterNames", invalidCase{obj: crp("pickn-names", selectNS+`
  policy: {placementType: PickN, numberOfClusters: 1, clusterNames: [a]}`), want: []string{"spec.policy", "clusterNames cannot be set when placementType is PickN"}}),
	Entry("PickFixed with numberOfClusters", invalidCase{obj: crp("pickfixed-count", selectNS+`
  policy: {placementType: PickFixed, clusterNames: [a], numberOfClusters: 1}`), want: []string{"spec.policy", "numberOfClusters cannot be set when placementType is PickFixed"}}),
	Entry("PickFixed with affinity", invalidCase{obj: crp("pickfixed-affinity", selectNS+`
  policy:
    placementType: PickFixed
    clusterNames: [a]
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{labelSelector: {matchLabels: {a: b}}}]}}}`), want: []string{"spec.policy", "affinity cannot be set when placementType is PickFixed"}}),
	Entry("PickFixed with topologySpreadConstraints", invalidCase{obj: crp("pickfixed-tsc", selectNS+`
  policy: {placementType: PickFixed, clusterNames: [a], topologySpreadConstraints: [{topologyKey: region}]}`), want: []string{"spec.policy", "topologySpreadConstraints cannot be set when placementType"}}),
	Entry("PickFixed with tolerations", invalidCase{obj: crp("pickfixed-tol", selectNS+`
  policy: {placementType: PickFixed, clusterNames: [a], tolerations: [{key: a, operator: Exists}]}`), want: []string{"spec.policy", "tolerations cannot be set when placementType is PickFixed"}}),
	Entry("PickAll with clusterNames", invalidCase{obj: crp("pickall-names", selectNS+`
  policy: {placementType: PickAll, clusterNames: [a]}`), want: []string{"spec.policy", "clusterNames cannot be set when placementType is PickAll"}}),
	Entry("PickAll with numberOfClusters", invalidCase{obj: crp("pickall-count", selectNS+`
  policy: {placementType: PickAll, numberOfClusters: 2}`), want: []string{"spec.policy", "numberOfClusters cannot be set when placementType is PickAll"}}),
	Entry("PickAll with topologySpreadConstraints", invalidCase{obj: crp("pickall-tsc", selectNS+`
  policy: {placementType: PickAll, topologySpreadConstraints: [{topologyKey: region}]}`), want: []string{"spec.policy", "topologySpreadConstraints cannot be set when placementType"}}),
	Entry("unknown placementType", invalidCase{obj: crp("bad-type", selectNS+`
  policy: {placementType: PickSome}`), want: []string{"spec.policy.placementType", `Unsupported value: "PickSome"`}}),
	Entry("negative numberOfClusters", invalidCase{obj: crp("neg-count", selectNS+`
  policy: {placementType: PickN, numberOfClusters: -1}`), want: []string{"spec.policy.numberOfClusters", "should be greater than or equal to 0"}}),
	Entry("ResourcePlacement PickN without numberOfClusters", invalidCase{obj: rp("rp-pickn", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {placementType: PickN}`), want: []string{"spec.policy", "numberOfClusters is required when placementType is PickN"}}),

	// Resource selectors.
	Entry("ClusterResourcePlacement name of 64 characters", invalidCase{obj: crp(strings.Repeat("p", 64), selectNS), want: []string{"metadata.name must be at most 63 characters long"}}),
	Entry("ResourcePlacement name of 64 characters", invalidCase{obj: rp(strings.Repeat("p", 64), `
  resourceSelectors:
  - {group: "", version: v1, kind: ConfigMap, name: cm}`), want: []string{"metadata.name must be at most 63 characters long"}}),
	Entry("no resourceSelectors", invalidCase{obj: crp("no-selectors", `
  resourceSelectors: []`), want: []string{"spec.resourceSelectors", "should have at least 1 items"}}),
	Entry("101 resourceSelectors", invalidCase{obj: crp("many-selectors", selectors(101)), want: []string{"spec.resourceSelectors", "must have at most 100 items"}}),
	Entry("name together with labelSelector", invalidCase{obj: crp("name-and-labels", `
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app, labelSelector: {matchLabels: {a: b}}}]`), want: []string{"spec.resourceSelectors[0]", "name and labelSelector are mutually exclusive"}}),
	Entry("selector without kind", invalidCase{obj: crp("no-kind", `
  resourceSelectors: [{group: "", version: v1, name: app}]`), want: []string{"spec.resourceSelectors[0].kind", "Required value"}}),
	Entry("unknown selectionScope", invalidCase{obj: crp("bad-scope", `
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app, selectionScope: Everything}]`), want: []string{"spec.resourceSelectors[0].selectionScope", "Unsupported value"}}),
	Entry("two NamespaceWithResourceSelectors selectors", invalidCase{obj: crp("two-nwrs", `
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: a, selectionScope: NamespaceWithResourceSelectors}
  - {group: "", version: v1, kind: Namespace, name: b, selectionScope: NamespaceWithResourceSelectors}`), want: []string{"spec.resourceSelectors", "at most one Namespace resourceSelector may use selectionScope"}}),
	Entry("NamespaceWithResourceSelectors by label", invalidCase{obj: crp("nwrs-label", `
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, labelSelector: {matchLabels: {a: b}}, selectionScope: NamespaceWithResourceSelectors}`), want: []string{"spec.resourceSelectors", "NamespaceWithResourceSelectors"}}),
	Entry("NamespaceWithResourceSelectors next to another Namespace selector", invalidCase{obj: crp("nwrs-mixed", `
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: a, selectionScope: NamespaceWithResourceSelectors}
  - {group: "", version: v1, kind: Namespace, name: b}`), want: []string{"spec.resourceSelectors", "NamespaceWithResourceSelectors"}}),
	Entry("NamespaceAccessible with two namespaces", invalidCase{obj: crp("nsa-two", `
  statusReportingScope: NamespaceAccessible
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: a}
  - {group: "", version: v1, kind: Namespace, name: b}`), want: []string{"statusReportingScope NamespaceAccessible requires exactly one resourceSelector"}}),
	Entry("unknown statusReportingScope", invalidCase{obj: crp("bad-srs", selectNS+`
  statusReportingScope: Everywhere`), want: []string{"spec.statusReportingScope", "Unsupported value"}}),

	// Cluster names, affinity, properties, topology spread, tolerations.
	Entry("101 clusterNames", invalidCase{obj: crp("many-names", selectNS+`
  policy:
    placementType: PickFixed`+clusterNames(101)), want: []string{"spec.policy.clusterNames", "must have at most 100 items"}}),
	Entry("11 required clusterSelectorTerms", invalidCase{obj: crp("many-terms", selectNS+`
  policy:
    placementType: PickAll`+terms(11)), want: []string{"clusterSelectorTerms", "must have at most 10 items"}}),
	Entry("preferred weight above 100", invalidCase{obj: crp("heavy", selectNS+`
  policy:
    placementType: PickN
    numberOfClusters: 1
    affinity: {clusterAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, preference: {labelSelector: {matchLabels: {a: b}}}}]}}`), want: []string{"preferredDuringSchedulingIgnoredDuringExecution[0].weight", "should be less than or equal to 100"}}),
	Entry("property selector with two values", invalidCase{obj: crp("two-values", selectNS+`
  policy:
    placementType: PickAll
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: ["1", "2"]}]}}]}}}`), want: []string{"values", "must have at most 1 items"}}),
	Entry("property selector without a value", invalidCase{obj: crp("no-values", selectNS+`
  policy:
    placementType: PickAll
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: []}]}}]}}}`), want: []string{"values", "should have at least 1 items"}}),
	Entry("unknown property operator", invalidCase{obj: crp("bad-op", selectNS+`
  policy:
    placementType: PickAll
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Between, values: ["1"]}]}}]}}}`), want: []string{"operator", `Unsupported value: "Between"`}}),
	Entry("property value that is not a quantity", invalidCase{obj: crp("value-word", selectNS+`
  policy:
    placementType: PickAll
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: ["five"]}]}}]}}}`), want: []string{"values[0]", "should match"}}),
	Entry("property value with an exponent that would stall the scheduler", invalidCase{obj: crp("value-exponent", selectNS+`
  policy:
    placementType: PickAll
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: ["1e-99999999"]}]}}]}}}`), want: []string{"values[0]", "should match"}}),
	Entry("propertySorter in a required term", invalidCase{obj: crp("sorter-required", selectNS+`
  policy:
    placementType: PickAll
    affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySorter: {name: kubernetes-fleet.io/node-count, sortOrder: Ascending}}]}}}`), want: []string{"propertySorter can only be used in preferredDuringSchedulingIgnoredDuringExecution"}}),
	Entry("propertySelector in a preferred term", invalidCase{obj: crp("selector-preferred", selectNS+`
  policy:
    placementType: PickN
    numberOfClusters: 1
    affinity: {clusterAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, preference: {propertySelector: {matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: ["1"]}]}}}]}}`), want: []string{"propertySelector can only be used in requiredDuringSchedulingIgnoredDuringExecution"}}),
	Entry("maxSkew 0", invalidCase{obj: crp("skew0", selectNS+`
  policy: {placementType: PickN, numberOfClusters: 2, topologySpreadConstraints: [{maxSkew: 0, topologyKey: region}]}`), want: []string{"maxSkew", "should be greater than or equal to 1"}}),
	Entry("unknown whenUnsatisfiable", invalidCase{obj: crp("bad-when", selectNS+`
  policy: {placementType: PickN, numberOfClusters: 2, topologySpreadConstraints: [{topologyKey: region, whenUnsatisfiable: Sometimes}]}`), want: []string{"whenUnsatisfiable", "Unsupported value"}}),
	Entry("101 tolerations", invalidCase{obj: crp("many-tol", selectNS+`
  policy:
    placementType: PickAll`+tolerations(101)), want: []string{"spec.policy.tolerations", "must have at most 100 items"}}),
	Entry("toleration with a value and Exists", invalidCase{obj: crp("tol-exists-value", selectNS+`
  policy: {placementType: PickAll, tolerations: [{key: a, operator: Exists, value: b}]}`), want: []string{"spec.policy.tolerations[0]", "toleration value must be empty when operator is Exists"}}),
	Entry("toleration with an empty key and Equal", invalidCase{obj: crp("tol-empty-key", selectNS+`
  policy: {placementType: PickAll, tolerations: [{operator: Equal, value: b}]}`), want: []string{"spec.policy.tolerations[0]", "toleration operator must be Exists when key is empty"}}),
	Entry("toleration effect other than NoSchedule", invalidCase{obj: crp("tol-effect", selectNS+`
  policy: {placementType: PickAll, tolerations: [{key: a, operator: Exists, effect: NoExecute}]}`), want: []string{"effect", `Unsupported value: "NoExecute"`}}),

	// Rollout and apply strategy.
	Entry("maxUnavailable 101%", invalidCase{obj: crp("mu101", selectNS+`
  strategy: {rollingUpdate: {maxUnavailable: "101%"}}`), want: []string{"spec.strategy.rollingUpdate.maxUnavailable", "should match"}}),
	Entry("maxSurge negative", invalidCase{obj: crp("ms-neg", selectNS+`
  strategy: {rollingUpdate: {maxSurge: -1}}`), want: []string{"spec.strategy.rollingUpdate.maxSurge", "maxSurge must be a non-negative integer or a percentage"}}),
	Entry("negative unavailablePeriodSeconds", invalidCase{obj: crp("ups-neg", selectNS+`
  strategy: {rollingUpdate: {unavailablePeriodSeconds: -5}}`), want: []string{"unavailablePeriodSeconds", "should be greater than or equal to 0"}}),
	Entry("rollingUpdate with type External", invalidCase{obj: crp("external-rolling", selectNS+`
  strategy: {type: External, rollingUpdate: {maxUnavailable: 1}}`), want: []string{"spec.strategy", "rollingUpdate cannot be set when strategy type is External"}}),
	Entry("serverSideApplyConfig with ClientSideApply", invalidCase{obj: crp("ssa-config", selectNS+`
  strategy: {applyStrategy: {type: ClientSideApply, serverSideApplyConfig: {force: true}}}`), want: []string{"spec.strategy.applyStrategy", "serverSideApplyConfig can only be set when applyStrategy"}}),
	Entry("unknown whenToTakeOver", invalidCase{obj: crp("bad-takeover", selectNS+`
  strategy: {applyStrategy: {whenToTakeOver: Sometimes}}`), want: []string{"spec.strategy.applyStrategy.whenToTakeOver", "Unsupported value"}}),
	Entry("revisionHistoryLimit 0", invalidCase{obj: crp("rhl0", selectNS+`
  revisionHistoryLimit: 0`), want: []string{"spec.revisionHistoryLimit", "should be greater than or equal to 1"}}),
	Entry("revisionHistoryLimit 1001", invalidCase{obj: crp("rhl1001", selectNS+`
  revisionHistoryLimit: 1001`), want: []string{"spec.revisionHistoryLimit", "should be less than or equal to 1000"}}),

	// Updates: immutability and transition rules.
	Entry("changing the placement type", invalidCase{
		old: crp("change-type", selectNS+`
  policy: {placementType: PickAll}`),
		obj: crp("change-type", selectNS+`
  policy: {placementType: PickN, numberOfClusters: 2}`),
		want: []string{"spec.policy.placementType", "placementType is immutable"}}),
	Entry("removing the policy", invalidCase{
		old: crp("drop-policy", selectNS+`
  policy: {placementType: PickAll}`),
		obj:  crp("drop-policy", selectNS),
		want: []string{"spec", "policy cannot be removed once set"}}),
	Entry("changing a toleration", invalidCase{
		old: crp("change-tol", selectNS+`
  policy: {placementType: PickAll, tolerations: [{key: a, operator: Exists}]}`),
		obj: crp("change-tol", selectNS+`
  policy: {placementType: PickAll, tolerations: [{key: b, operator: Exists}]}`),
		want: []string{"spec.policy.tolerations", "tolerations can be added but existing ones cannot be changed"}}),
	Entry("removing a toleration", invalidCase{
		old: crp("drop-tol", selectNS+`
  policy: {placementType: PickAll, tolerations: [{key: a, operator: Exists}, {key: b, operator: Exists}]}`),
		obj: crp("drop-tol", selectNS+`
  policy: {placementType: PickAll, tolerations: [{key: b, operator: Exists}]}`),
		want: []string{"spec.policy.tolerations", "tolerations can be added but existing ones cannot be changed"}}),
	Entry("leaving the External strategy", invalidCase{
		old:  crp("leave-external", selectNS+"\n  strategy: {type: External}"),
		obj:  crp("leave-external", selectNS+"\n  strategy: {type: RollingUpdate}"),
		want: []string{"spec.strategy", "strategy type cannot be changed from External"}}),
	Entry("changing statusReportingScope", invalidCase{
		old:  crp("change-srs", selectNS+"\n  statusReportingScope: NamespaceAccessible"),
		obj:  crp("change-srs", selectNS+"\n  statusReportingScope: ClusterScopeOnly"),
		want: []string{"spec.statusReportingScope", "statusReportingScope is immutable"}}),

	// MemberCluster (root:fleet).
	Entry("MemberCluster name longer than 63", invalidCase{fleet: true, obj: memberCluster(strings.Repeat("m", 64), identity), want: []string{"metadata.name must be at most 63 characters long"}}),
	Entry("MemberCluster name with underscore", invalidCase{fleet: true, obj: memberCluster("member_1", identity), want: []string{"metadata.name must be a DNS label"}}),
	Entry("MemberCluster heartbeat above 600", invalidCase{fleet: true, obj: memberCluster("slow-beat", identity+`
  heartbeatPeriodSeconds: 601`), want: []string{"spec.heartbeatPeriodSeconds", "should be less than or equal to 600"}}),
	Entry("MemberCluster taint with NoExecute", invalidCase{fleet: true, obj: memberCluster("noexec", identity+`
  taints: [{key: a, value: b, effect: NoExecute}]`), want: []string{"spec.taints[0].effect", "Unsupported value"}}),
	Entry("MemberCluster without identity", invalidCase{fleet: true, obj: memberCluster("no-identity", " {}"), want: []string{"spec.identity", "Required value"}}),

	// Overrides.
	Entry("ClusterResourceOverride referencing a namespaced placement", invalidCase{obj: obj("ClusterResourceOverride", "cro-ns", `
  placement: {name: p, scope: Namespaced}
  clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: add, path: /metadata/labels/a, value: b}]}]}`), want: []string{"spec.placement", "a ClusterResourceOverride can only reference a ClusterResourcePlacement"}}),
	Entry("ClusterResourceOverride with 21 rules", invalidCase{obj: obj("ClusterResourceOverride", "cro-rules", `
  clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
  policy:
    overrideRules:`+strings.Repeat("\n    - {jsonPatchOverrides: [{op: add, path: /metadata/labels/a, value: b}]}", 21)), want: []string{"spec.policy.overrideRules", "must have at most 20 items"}}),
	Entry("override patching /status", invalidCase{obj: nsObj("ResourceOverride", "ro-status", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: replace, path: /status/replicas, value: 1}]}]}`), want: []string{"path cannot target /kind, /apiVersion or /status"}}),
	Entry("override patching metadata.name", invalidCase{obj: nsObj("ResourceOverride", "ro-name", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: replace, path: /metadata/name, value: x}]}]}`), want: []string{"path under /metadata", "can only target /metadata/labels"}}),
	Entry("override adding /Kind (a case variant of kind)", invalidCase{obj: obj("ClusterResourceOverride", "cro-kind-case", `
  clusterResourceSelectors: [{group: apiextensions.k8s.io, version: v1, kind: CustomResourceDefinition, name: widgets.example.com}]
  policy: {overrideRules: [{clusterSelector: {}, jsonPatchOverrides: [{op: add, path: /Kind, value: ConfigMap}]}]}`), want: []string{"path cannot target /kind, /apiVersion or /status, in any letter case"}}),
	Entry("override adding /APIVERSION", invalidCase{obj: nsObj("ResourceOverride", "ro-apiversion-case", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: add, path: /APIVERSION, value: v1}]}]}`), want: []string{"in any letter case"}}),
	Entry("override patching /metadata/Namespace", invalidCase{obj: nsObj("ResourceOverride", "ro-namespace-case", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: add, path: /metadata/Namespace, value: kube-system}]}]}`), want: []string{"path under /metadata", "spelled exactly"}}),
	Entry("override patching /Metadata/labels", invalidCase{obj: nsObj("ResourceOverride", "ro-metadata-case", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: add, path: /Metadata/labels, value: {a: b}}]}]}`), want: []string{"path under /metadata", "spelled exactly"}}),
	Entry("override path without leading slash", invalidCase{obj: nsObj("ResourceOverride", "ro-slash", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: replace, path: spec/replicas, value: 1}]}]}`), want: []string{"path must be a JSON pointer starting with '/'"}}),
	Entry("Delete override with patches", invalidCase{obj: nsObj("ResourceOverride", "ro-delete", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{overrideType: Delete, jsonPatchOverrides: [{op: remove, path: /spec/replicas}]}]}`), want: []string{"jsonPatchOverrides cannot be set when overrideType"}}),
	Entry("unknown patch op", invalidCase{obj: nsObj("ResourceOverride", "ro-op", `
  resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: move, path: /spec/replicas}]}]}`), want: []string{"op", `Unsupported value: "move"`}}),
	Entry("changing an override's placement", invalidCase{
		old: obj("ClusterResourceOverride", "cro-move", `
  placement: {name: a}
  clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: add, path: /metadata/labels/a, value: b}]}]}`),
		obj: obj("ClusterResourceOverride", "cro-move", `
  placement: {name: b}
  clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
  policy: {overrideRules: [{jsonPatchOverrides: [{op: add, path: /metadata/labels/a, value: b}]}]}`),
		want: []string{"placement is immutable"}}),

	// Staged updates and approvals.
	Entry("stage name with a dash", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "stage-dash", `
  stages: [{name: my-stage}]`), want: []string{"spec.stages[0].name", "should match '^[a-z0-9]+$'"}}),
	Entry("32 stages", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "many-stages", "\n  stages:"+func() string {
		var b strings.Builder
		for i := 0; i < 32; i++ {
			fmt.Fprintf(&b, "\n  - {name: s%d}", i)
		}
		return b.String()
	}()), want: []string{"spec.stages", "must have at most 31 items"}}),
	Entry("TimedWait without waitTime", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "no-wait", `
  stages: [{name: canary, afterStageTasks: [{type: TimedWait}]}]`), want: []string{"waitTime is required when the task type is TimedWait"}}),
	Entry("Approval with waitTime", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "approval-wait", `
  stages: [{name: canary, afterStageTasks: [{type: Approval, waitTime: 1h}]}]`), want: []string{"waitTime cannot be set when the task type is Approval"}}),
	Entry("waitTime in days", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "wait-days", `
  stages: [{name: canary, afterStageTasks: [{type: TimedWait, waitTime: 1d}]}]`), want: []string{"waitTime", "should match"}}),
	Entry("TimedWait before a stage", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "before-wait", `
  stages: [{name: canary, beforeStageTasks: [{type: TimedWait, waitTime: 1h}]}]`), want: []string{"beforeStageTasks only support the Approval task type"}}),
	Entry("maxConcurrency 0", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "conc0", `
  stages: [{name: canary, maxConcurrency: 0}]`), want: []string{"maxConcurrency", "maxConcurrency must be an integer of at least 1"}}),
	Entry("maxConcurrency 101%", invalidCase{obj: obj("ClusterStagedUpdateStrategy", "conc101", `
  stages: [{name: canary, maxConcurrency: "101%"}]`), want: []string{"maxConcurrency", "should match"}}),
	Entry("update run name of 64 characters", invalidCase{obj: obj("ClusterStagedUpdateRun", strings.Repeat("r", 64), `
  placementName: p
  stagedRolloutStrategyName: s`), want: []string{"metadata.name must be at most 63 characters long"}}),
	Entry("update run moving from Initialize to Stop", invalidCase{
		old:  obj("ClusterStagedUpdateRun", "run-stop", "\n  placementName: p\n  stagedRolloutStrategyName: s\n  state: Initialize"),
		obj:  obj("ClusterStagedUpdateRun", "run-stop", "\n  placementName: p\n  stagedRolloutStrategyName: s\n  state: Stop"),
		want: []string{"state cannot change from Initialize to Stop"}}),
	Entry("update run changing its placement", invalidCase{
		old:  obj("ClusterStagedUpdateRun", "run-move", "\n  placementName: p\n  stagedRolloutStrategyName: s"),
		obj:  obj("ClusterStagedUpdateRun", "run-move", "\n  placementName: q\n  stagedRolloutStrategyName: s"),
		want: []string{"placementName is immutable"}}),
	Entry("approval request changing its stage", invalidCase{
		old:  obj("ClusterApprovalRequest", "approve", "\n  parentStageRollout: run\n  targetStage: canary"),
		obj:  obj("ClusterApprovalRequest", "approve", "\n  parentStageRollout: run\n  targetStage: prod"),
		want: []string{"spec is immutable"}}),

	// Eviction, disruption budget, envelopes.
	Entry("disruption budget with both fields", invalidCase{obj: obj("ClusterResourcePlacementDisruptionBudget", "both", `
  maxUnavailable: 1
  minAvailable: 1`), want: []string{"maxUnavailable and minAvailable are mutually exclusive"}}),
	Entry("disruption budget minAvailable 101%", invalidCase{obj: obj("ClusterResourcePlacementDisruptionBudget", "min101", `
  minAvailable: "101%"`), want: []string{"spec.minAvailable", "should match"}}),
	Entry("disruption budget negative maxUnavailable", invalidCase{obj: obj("ClusterResourcePlacementDisruptionBudget", "maxneg", `
  maxUnavailable: -1`), want: []string{"spec.maxUnavailable", "maxUnavailable must be a non-negative integer or a percentage"}}),
	Entry("eviction changing its cluster", invalidCase{
		old:  obj("ClusterResourcePlacementEviction", "evict", "\n  placementName: p\n  clusterName: a"),
		obj:  obj("ClusterResourcePlacementEviction", "evict", "\n  placementName: p\n  clusterName: b"),
		want: []string{"clusterName is immutable"}}),
	Entry("empty envelope", invalidCase{obj: "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceEnvelope\nmetadata: {name: empty}\ndata: {}",
		want: []string{"data", "should have at least 1 properties"}}),
}

// internalKinds are written by the hub's controllers alone (kcp's maximal
// permission policy refuses everyone else).
var internalKinds = map[string]bool{
	"ClusterResourceBinding": true, "ResourceBinding": true,
	"ClusterResourceSnapshot": true, "ResourceSnapshot": true,
	"ClusterSchedulingPolicySnapshot": true, "SchedulingPolicySnapshot": true,
	"ClusterResourceOverrideSnapshot": true, "ResourceOverrideSnapshot": true,
	"ClusterApprovalRequest": true, "ApprovalRequest": true,
	"ClusterResourcePlacementStatus": true, "Work": true, "AppliedWork": true, "InternalMemberCluster": true,
}

var _ = Describe("Admission", Ordered, func() {
	var team, teamControllers client.Client
	var fleet, fleetControllers client.Client
	// clientFor picks who creates an object: the objects only the hub's
	// controllers write (bindings, snapshots, Work, approval requests, ...)
	// are created with the controllers' identity, so that their admission
	// rules are checked as the controllers meet them.
	clientFor := func(o client.Object, inFleet bool) client.Client {
		internal := internalKinds[o.GetObjectKind().GroupVersionKind().Kind]
		switch {
		case inFleet && internal:
			return fleetControllers
		case inFleet:
			return fleet
		case internal:
			return teamControllers
		}
		return team
	}

	BeforeAll(func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("admission"))
		Expect(err).NotTo(HaveOccurred())
		team, err = hub.Client(path, nil)
		Expect(err).NotTo(HaveOccurred())
		teamControllers, err = hub.ControllerClient(path, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(team.Create(ctx, framework.Namespace("app"))).To(Succeed())
		fleet, err = hub.Client("root:fleet", nil)
		Expect(err).NotTo(HaveOccurred())
		fleetControllers, err = hub.ControllerClient("root:fleet", nil)
		Expect(err).NotTo(HaveOccurred())
	})

	It("has at least 60 invalid cases", func() {
		Expect(len(invalidCases)).To(BeNumerically(">=", 60))
	})

	DescribeTable("rejects invalid objects with a message that names the field and the rule",
		func(ctx SpecContext, tc invalidCase) {
			target := decode(tc.obj)
			c := clientFor(target, tc.fleet)
			if tc.old != "" {
				old := decode(tc.old)
				Expect(c.Create(ctx, old)).To(Succeed(), "creating the original object")
				DeferCleanup(func(ctx SpecContext) { _ = c.Delete(ctx, old) })
				// Controllers may touch the object (finalizers, status)
				// meanwhile: update the latest version.
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					if err := c.Get(ctx, client.ObjectKeyFromObject(old), old); err != nil {
						return err
					}
					target.SetResourceVersion(old.GetResourceVersion())
					return c.Update(ctx, target)
				})
				expectRejected(err, tc.want)
				return
			}
			err := c.Create(ctx, target)
			if err == nil {
				DeferCleanup(func(ctx SpecContext) { _ = c.Delete(ctx, target) })
			}
			expectRejected(err, tc.want)
		},
		invalidCases,
	)

	It("accepts the valid manifests of the seeds and KubeFleet's examples and rejects the invalid ones", func(ctx SpecContext) {
		manifests, err := framework.LoadManifests("../testdata/manifests")
		Expect(err).NotTo(HaveOccurred())
		Expect(len(manifests)).To(BeNumerically(">=", 40))
		for _, m := range manifests {
			By(m.Path)
			var created []*unstructured.Unstructured
			var rejected []error
			for _, o := range m.Objects {
				c := clientFor(o, o.GroupVersionKind().Group == "cluster.kubernetes-fleet.io")
				if ns := o.GetNamespace(); ns != "" {
					ensureNamespace(ctx, c, ns)
				}
				err := c.Create(ctx, o)
				if apierrors.IsAlreadyExists(err) && o.GetKind() == "Namespace" {
					continue // shared with the other specs of this workspace
				}
				if err != nil {
					rejected = append(rejected, err)
					continue
				}
				created = append(created, o)
			}
			// Names repeat across examples: remove what this file created.
			for _, o := range created {
				c := clientFor(o, o.GroupVersionKind().Group == "cluster.kubernetes-fleet.io")
				Expect(c.Delete(ctx, o)).To(Succeed())
			}
			if m.Valid {
				Expect(rejected).To(BeEmpty(), "%s is valid and must be accepted", m.Path)
			} else {
				Expect(rejected).NotTo(BeEmpty(), "%s is invalid (%s) and must be rejected", m.Path, m.Why)
				for _, err := range rejected {
					Expect(apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)).To(BeTrue(), "%s: unexpected error %v", m.Path, err)
				}
			}
		}
	})
})

func decode(s string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	ExpectWithOffset(1, yaml.Unmarshal([]byte(s), &u.Object)).To(Succeed(), s)
	return u
}

func expectRejected(err error, want []string) {
	ExpectWithOffset(1, err).To(HaveOccurred(), "the object was accepted")
	ExpectWithOffset(1, apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)).To(BeTrue(), "unexpected error: %v", err)
	for _, w := range want {
		ExpectWithOffset(1, err.Error()).To(ContainSubstring(w))
	}
}

func ensureNamespace(ctx SpecContext, c client.Client, name string) {
	err := c.Create(ctx, framework.Namespace(name))
	if err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}
