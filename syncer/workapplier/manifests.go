package workapplier

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/manifests"
	"github.com/fleetplane/fleetplane/syncer/diff"
)

// manifest is one entry of a Work, decoded, with what happened to it.
type manifest struct {
	id  placementv1beta1.WorkResourceIdentifier
	obj *unstructured.Unstructured
	gvr schema.GroupVersionResource
	// clusterScoped is the kind's scope as the member serves it.
	clusterScoped bool
	hash          string
	wave          int
	applied       applyOutcome
	avail         availabilityOutcome
	live          *unstructured.Unstructured
	// wrote is set when the apply wrote the object: live is what the
	// write returned.
	wrote bool
	// drifts are the member's changes to what this placement applied.
	drifts []diff.Detail
	// diffs are the differences ReportDiff found; diffReported is set once
	// it compared (nothing to compare with when the object is missing).
	diffs        []diff.Detail
	diffReported bool
	// warnings are the member's recent warnings about the object.
	warnings []placementv1beta1.MemberWarning
}

type applyOutcome struct {
	reason  string
	message string
	ok      bool
}

type availabilityOutcome struct {
	reason  string
	message string
	// status is the Available condition status: True, False or Unknown.
	status string
}

// decode turns the Work's manifests into objects. A manifest that cannot be
// decoded, uses generateName or repeats an earlier one fails alone.
func decode(work *placementv1beta1.Work) []*manifest {
	out := make([]*manifest, 0, len(work.Spec.Workload.Manifests))
	seen := map[string]int{}
	for i, raw := range work.Spec.Workload.Manifests {
		m := &manifest{id: placementv1beta1.WorkResourceIdentifier{Ordinal: i}}
		out = append(out, m)
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw.Raw, &obj.Object); err != nil || obj.GetKind() == "" || obj.GetAPIVersion() == "" {
			m.fail(placementv1beta1.ApplyResultDecodingErred, fmt.Sprintf("manifest %d is not a Kubernetes object (apiVersion and kind are required): %v", i, err))
			continue
		}
		// A key repeated or spelled in another letter case could make the
		// member's API server read another object than the hub checked.
		if _, err := manifests.ReadHead(raw.Raw); err != nil {
			m.fail(placementv1beta1.ApplyResultDecodingErred, fmt.Sprintf("manifest %d (%s %s): %v", i, obj.GetKind(), obj.GetName(), err))
			continue
		}
		gvk := obj.GroupVersionKind()
		m.id.Group, m.id.Version, m.id.Kind = gvk.Group, gvk.Version, gvk.Kind
		m.id.Namespace, m.id.Name = obj.GetNamespace(), obj.GetName()
		if obj.GetName() == "" {
			reason, msg := placementv1beta1.ApplyResultDecodingErred, "the manifest has no metadata.name"
			if obj.GetGenerateName() != "" {
				reason, msg = placementv1beta1.ApplyResultFoundGenerateName, "metadata.generateName is not supported: every placed object needs a fixed metadata.name"
			}
			m.fail(reason, msg)
			continue
		}
		key := gvk.GroupKind().String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
		if first, dup := seen[key]; dup {
			m.fail(placementv1beta1.ApplyResultDuplicated, fmt.Sprintf("the same object is already manifest %d of this Work", first))
			continue
		}
		seen[key] = i
		m.obj = obj
		m.hash = hashOf(raw.Raw)
		m.wave = waveOf(gvk.GroupKind())
	}
	return out
}

// fail records why the manifest was not applied; its availability is
// then unknown (a status condition needs a status and a reason, even for a
// manifest that never reaches the apply waves).
func (m *manifest) fail(reason, message string) {
	m.applied = applyOutcome{reason: reason, message: message}
	m.avail = notApplied
}

// inWaves returns the decodable manifests grouped by apply wave, in order.
func inWaves(ms []*manifest) [][]*manifest {
	byWave := map[int][]*manifest{}
	var waves []int
	for _, m := range ms {
		if m.obj == nil {
			continue
		}
		if _, ok := byWave[m.wave]; !ok {
			waves = append(waves, m.wave)
		}
		byWave[m.wave] = append(byWave[m.wave], m)
	}
	sort.Ints(waves)
	out := make([][]*manifest, 0, len(waves))
	for _, w := range waves {
		out = append(out, byWave[w])
	}
	return out
}

// waves orders kinds so that what others depend on exists first: namespaces
// and CRDs before the objects in them, roles before bindings, workloads last.
var waves = map[schema.GroupKind]int{
	{Kind: "Namespace"}: 0,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:               0,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: 1,
	{Kind: "ConfigMap"}:                                                             1,
	{Kind: "Secret"}:                                                                1,
	{Kind: "ServiceAccount"}:                                                        1,
	{Kind: "LimitRange"}:                                                            1,
	{Kind: "ResourceQuota"}:                                                         1,
	{Kind: "PersistentVolume"}:                                                      1,
	{Kind: "PersistentVolumeClaim"}:                                                 1,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 1,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:                             1,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                              1,
	{Group: "policy", Kind: "PodDisruptionBudget"}:                                  1,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       2,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                              2,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                3,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                       3,
	{Kind: "Service"}:                                                               4,
	{Group: "apps", Kind: "Deployment"}:                                             4,
	{Group: "apps", Kind: "StatefulSet"}:                                            4,
	{Group: "apps", Kind: "DaemonSet"}:                                              4,
	{Group: "apps", Kind: "ReplicaSet"}:                                             4,
	{Group: "batch", Kind: "Job"}:                                                   4,
	{Group: "batch", Kind: "CronJob"}:                                               4,
	{Group: "networking.k8s.io", Kind: "Ingress"}:                                   4,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:                         4,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                           5,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   5,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: 5,
}

// lastWave holds kinds not listed above, e.g. custom resources.
const lastWave = 6

func waveOf(gk schema.GroupKind) int {
	if w, ok := waves[gk]; ok {
		return w
	}
	return lastWave
}
