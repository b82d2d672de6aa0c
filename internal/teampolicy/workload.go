package teampolicy

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psapi "k8s.io/pod-security-admission/api"
	pspolicy "k8s.io/pod-security-admission/policy"
)

// Level is a Pod Security Standards level: privileged, baseline or
// restricted.
type Level = psapi.Level

// The levels, from the loosest.
const (
	LevelPrivileged = psapi.LevelPrivileged
	LevelBaseline   = psapi.LevelBaseline
	LevelRestricted = psapi.LevelRestricted
)

// DefaultPodSecurity is the level of a team whose grants set none: no
// privileged containers, host namespaces, hostPath volumes or added
// capabilities, the defaults most workloads run with.
const DefaultPodSecurity = LevelBaseline

// Looser tells whether level a allows more than level b.
func Looser(a, b Level) bool { return psapi.CompareLevels(a, b) < 0 }

// podTemplatePaths are where each workload kind keeps the pods it makes.
var podTemplatePaths = map[schema.GroupKind][]string{
	{Kind: "PodTemplate"}:                {"template"},
	{Kind: "ReplicationController"}:      {"spec", "template"},
	{Group: "apps", Kind: "Deployment"}:  {"spec", "template"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec", "template"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec", "template"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec", "template"},
	{Group: "batch", Kind: "Job"}:        {"spec", "template"},
	{Group: "batch", Kind: "CronJob"}:    {"spec", "jobTemplate", "spec", "template"},
}

var evaluator = sync.OnceValues(func() (pspolicy.Evaluator, error) {
	return pspolicy.NewEvaluator(pspolicy.DefaultChecks())
})

// CheckWorkload holds a workload's pods to the policy's Pod Security level
// (the member's own Pod Security admission refuses such pods only when a
// controller makes them, long after the placement looked applied). Below
// privileged it also refuses system-* priority classes, which let pods
// preempt the cluster's own, and Service externalIPs, which let a Service
// take over any address's traffic (CVE-2020-8554).
func (p Policy) CheckWorkload(obj *unstructured.Unstructured) *Refusal {
	level := p.podSecurity()
	if level == LevelPrivileged {
		return nil
	}
	gk := obj.GroupVersionKind().GroupKind()
	if gk == (schema.GroupKind{Kind: "Service"}) {
		if ips, _, _ := unstructured.NestedSlice(obj.Object, "spec", "externalIPs"); len(ips) > 0 {
			return refuse("%s sets spec.externalIPs, which only workspaces granted Pod Security level privileged may place (this workspace's level on the member cluster is %s): remove them, or use a LoadBalancer Service", describe(gk, obj), level)
		}
		return nil
	}
	template, err := podTemplate(gk, obj)
	if err != nil {
		return refuse("%s: %v", describe(gk, obj), err)
	}
	if template == nil {
		return nil
	}
	if pc := template.Spec.PriorityClassName; strings.HasPrefix(pc, "system-") {
		return refuse("%s uses priority class %s, which belongs to the member cluster's own components: use a priority class of your own", describe(gk, obj), pc)
	}
	ev, err := evaluator()
	if err != nil {
		return refuse("%s: cannot evaluate Pod Security: %v", describe(gk, obj), err)
	}
	lv := psapi.LevelVersion{Level: level, Version: psapi.LatestVersion()}
	result := pspolicy.AggregateCheckResults(ev.EvaluatePod(lv, &template.ObjectMeta, &template.Spec))
	if !result.Allowed {
		return refuse("%s would run pods that violate Pod Security level %q, the level this workspace's ClusterGrants set on the member cluster: %s (%s); change the pod template, or ask a platform admin for a grant with a looser podSecurity",
			describe(gk, obj), level, result.ForbiddenReason(), result.ForbiddenDetail())
	}
	return nil
}

// podTemplate reads the pods a workload makes (a Pod is its own template);
// nil for other kinds.
func podTemplate(gk schema.GroupKind, obj *unstructured.Unstructured) (*corev1.PodTemplateSpec, error) {
	var content map[string]any
	if gk == (schema.GroupKind{Kind: "Pod"}) {
		content = obj.Object
	} else if path, ok := podTemplatePaths[gk]; ok {
		found, _, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if err != nil {
			return nil, fmt.Errorf("%s is not an object: %v", strings.Join(path, "."), err)
		}
		content, _ = found.(map[string]any)
		if found != nil && content == nil {
			return nil, fmt.Errorf("%s is not an object", strings.Join(path, "."))
		}
	} else {
		return nil, nil
	}
	template := &corev1.PodTemplateSpec{}
	if content == nil {
		return template, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, template); err != nil {
		return nil, fmt.Errorf("its pod template cannot be read: %v", err)
	}
	return template, nil
}

func describe(gk schema.GroupKind, obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", gk.Kind, ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", gk.Kind, obj.GetName())
}

// LabelNamespace sets the Pod Security labels of a team's Namespace about to
// be written to the member: it enforces the policy's level, or the
// namespace's own if that is stricter, at the latest version; audit and
// warn follow enforce unless the namespace sets them. A team cannot loosen
// what its grants set.
func (p Policy) LabelNamespace(ns *unstructured.Unstructured) {
	labels := ns.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	enforce := p.podSecurity()
	if own, err := psapi.ParseLevel(labels[psapi.EnforceLevelLabel]); err == nil && Looser(enforce, own) {
		enforce = own
	}
	labels[psapi.EnforceLevelLabel] = string(enforce)
	labels[psapi.EnforceVersionLabel] = psapi.VersionLatest
	for _, key := range []string{psapi.AuditLevelLabel, psapi.WarnLevelLabel} {
		if _, err := psapi.ParseLevel(labels[key]); err != nil {
			labels[key] = string(enforce)
		}
	}
	ns.SetLabels(labels)
}
