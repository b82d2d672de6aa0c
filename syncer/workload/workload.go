// Package workload reads, from a member object's status, what says whether
// it serves: replicas of workloads, counts of Jobs, a Service's
// load-balancer addresses, a phase and the object's own conditions. The
// syncer reports it with the Work's status, so that a team sees how its
// workloads run on clusters it cannot reach.
package workload

import (
	"encoding/json"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Bounds keep one object's report small whatever its controller writes.
const (
	maxConditions     = 16
	maxMessage        = 256
	maxIngress        = 16
	maxConditionField = 128
)

// replicaFields names, for kinds that do not use the usual names (spec
// replicas, status readyReplicas/updatedReplicas/availableReplicas), where
// each count is.
type replicaFields struct {
	wanted, ready, updated, available []string
}

var (
	scalable = replicaFields{
		wanted: []string{"spec", "replicas"}, ready: []string{"status", "readyReplicas"},
		updated: []string{"status", "updatedReplicas"}, available: []string{"status", "availableReplicas"},
	}
	daemonSet = replicaFields{
		wanted: []string{"status", "desiredNumberScheduled"}, ready: []string{"status", "numberReady"},
		updated: []string{"status", "updatedNumberScheduled"}, available: []string{"status", "numberAvailable"},
	}
	// defaultOne are the kinds whose spec.replicas means 1 when unset.
	defaultOne = map[schema.GroupKind]bool{
		{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	}
)

// State is what obj's status says about whether it serves, or nil when it
// says nothing (a ConfigMap, a Namespace).
func State(obj *unstructured.Unstructured) *placementv1beta1.WorkloadState {
	status, ok := obj.Object["status"].(map[string]any)
	if !ok && !defaultOne[obj.GroupVersionKind().GroupKind()] {
		return nil
	}
	s := &placementv1beta1.WorkloadState{}
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case gk == schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		readReplicas(obj, daemonSet, false, s)
	case gk == schema.GroupKind{Group: "batch", Kind: "Job"}:
		s.Active, s.Succeeded, s.Failed = count(obj, "status", "active"), count(obj, "status", "succeeded"), count(obj, "status", "failed")
	case gk == schema.GroupKind{Kind: "Service"}:
		s.LoadBalancerIngress = ingress(obj)
	case gk.Kind == "Namespace" && gk.Group == "":
		// Its phase is Active until it is deleted: nothing to say.
	default:
		readReplicas(obj, scalable, defaultOne[gk], s)
		s.Phase, _, _ = unstructured.NestedString(status, "phase")
	}
	s.Conditions = conditions(status)
	if isEmpty(s) {
		return nil
	}
	return s
}

// readReplicas reads the replica counts; a kind with none of them (no
// spec.replicas and no ready count) reports none.
func readReplicas(obj *unstructured.Unstructured, f replicaFields, wantsOne bool, s *placementv1beta1.WorkloadState) {
	s.Replicas = count(obj, f.wanted...)
	s.ReadyReplicas = count(obj, f.ready...)
	if s.Replicas == nil && wantsOne {
		s.Replicas = ptr.To[int32](1)
	}
	if s.Replicas == nil && s.ReadyReplicas == nil {
		return
	}
	zero := func(p *int32) *int32 { return ptr.To(ptr.Deref(p, 0)) }
	// The controllers leave counts that are zero out of the status.
	s.ReadyReplicas = zero(s.ReadyReplicas)
	s.UpdatedReplicas = zero(count(obj, f.updated...))
	s.AvailableReplicas = zero(count(obj, f.available...))
	s.Replicas = zero(s.Replicas)
}

func count(obj *unstructured.Unstructured, path ...string) *int32 {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if !found || err != nil {
		return nil
	}
	switch n := v.(type) {
	case int64:
		return ptr.To(int32(n))
	case float64:
		return ptr.To(int32(n))
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return ptr.To(int32(i))
		}
	}
	return nil
}

func ingress(obj *unstructured.Unstructured) []string {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	var out []string
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		for _, key := range []string{"ip", "hostname"} {
			if v, ok := m[key].(string); ok && v != "" {
				out = append(out, v)
				break
			}
		}
		if len(out) == maxIngress {
			break
		}
	}
	return out
}

func conditions(status map[string]any) []placementv1beta1.ObjectCondition {
	list, ok := status["conditions"].([]any)
	if !ok {
		return nil
	}
	var out []placementv1beta1.ObjectCondition
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		c := placementv1beta1.ObjectCondition{Type: field(m, "type", maxConditionField), Status: field(m, "status", maxConditionField),
			Reason: field(m, "reason", maxConditionField), Message: field(m, "message", maxMessage)}
		if c.Type == "" {
			continue
		}
		out = append(out, c)
		if len(out) == maxConditions {
			break
		}
	}
	return out
}

// field is a string of m, cut to limit bytes.
func field(m map[string]any, key string, limit int) string {
	s, _ := m[key].(string)
	return Cut(s, limit)
}

// Cut shortens s to at most n bytes, on a character boundary, marking the
// cut with "...".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("...")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func isEmpty(s *placementv1beta1.WorkloadState) bool {
	return s.Replicas == nil && s.ReadyReplicas == nil && s.Active == nil && s.Succeeded == nil && s.Failed == nil &&
		len(s.LoadBalancerIngress) == 0 && s.Phase == "" && len(s.Conditions) == 0
}

// Status is obj's whole status as the back-reported status carries it
// ({"status": ...}), or nil when it has none; tooLarge says it was left out
// because it is larger than placementv1beta1.MaxBackReportedStatusBytes.
func Status(obj *unstructured.Unstructured) (raw []byte, tooLarge bool, err error) {
	status, ok := obj.Object["status"]
	if !ok {
		return nil, false, nil
	}
	raw, err = json.Marshal(map[string]any{"status": status})
	if err != nil {
		return nil, false, err
	}
	if len(raw) > placementv1beta1.MaxBackReportedStatusBytes {
		return nil, true, nil
	}
	return raw, false, nil
}
