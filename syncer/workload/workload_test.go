package workload

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func obj(apiVersion, kind string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}}
	for k, v := range fields {
		o.Object[k] = v
	}
	return o
}

func TestState(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want *placementv1beta1.WorkloadState
	}{{
		name: "a Deployment scaled to 3, 2 ready",
		obj: obj("apps/v1", "Deployment", map[string]any{"spec": map[string]any{"replicas": int64(3)},
			"status": map[string]any{"readyReplicas": int64(2), "updatedReplicas": int64(3), "availableReplicas": int64(2),
				"conditions": []any{map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."}}}}),
		want: &placementv1beta1.WorkloadState{Replicas: ptr.To[int32](3), ReadyReplicas: ptr.To[int32](2), UpdatedReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](2),
			Conditions: []placementv1beta1.ObjectCondition{{Type: "Available", Status: "False", Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."}}},
	}, {
		name: "a Deployment just created: one replica wanted, none ready",
		obj:  obj("apps/v1", "Deployment", map[string]any{"spec": map[string]any{}}),
		want: &placementv1beta1.WorkloadState{Replicas: ptr.To[int32](1), ReadyReplicas: ptr.To[int32](0), UpdatedReplicas: ptr.To[int32](0), AvailableReplicas: ptr.To[int32](0)},
	}, {
		name: "a DaemonSet reads its own counts",
		obj: obj("apps/v1", "DaemonSet", map[string]any{"status": map[string]any{"desiredNumberScheduled": int64(4), "numberReady": int64(4),
			"updatedNumberScheduled": int64(3), "numberAvailable": int64(4)}}),
		want: &placementv1beta1.WorkloadState{Replicas: ptr.To[int32](4), ReadyReplicas: ptr.To[int32](4), UpdatedReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](4)},
	}, {
		name: "a Job",
		obj:  obj("batch/v1", "Job", map[string]any{"status": map[string]any{"active": int64(1), "failed": int64(2)}}),
		want: &placementv1beta1.WorkloadState{Active: ptr.To[int32](1), Failed: ptr.To[int32](2)},
	}, {
		name: "a LoadBalancer Service",
		obj: obj("v1", "Service", map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{
			map[string]any{"ip": "10.0.0.1"}, map[string]any{"hostname": "lb.example.com"}}}}}),
		want: &placementv1beta1.WorkloadState{LoadBalancerIngress: []string{"10.0.0.1", "lb.example.com"}},
	}, {
		name: "a ClusterIP Service says nothing",
		obj:  obj("v1", "Service", map[string]any{"status": map[string]any{"loadBalancer": map[string]any{}}}),
	}, {
		name: "a claim's phase",
		obj:  obj("v1", "PersistentVolumeClaim", map[string]any{"status": map[string]any{"phase": "Pending"}}),
		want: &placementv1beta1.WorkloadState{Phase: "Pending"},
	}, {
		name: "a ConfigMap says nothing",
		obj:  obj("v1", "ConfigMap", map[string]any{"data": map[string]any{"a": "b"}}),
	}, {
		name: "an active Namespace says nothing",
		obj:  obj("v1", "Namespace", map[string]any{"status": map[string]any{"phase": "Active"}}),
	}, {
		name: "a custom resource with conditions",
		obj:  obj("example.com/v1", "Database", map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, "junk"}}}),
		want: &placementv1beta1.WorkloadState{Conditions: []placementv1beta1.ObjectCondition{{Type: "Ready", Status: "True"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, State(tt.obj)); diff != "" {
				t.Errorf("State() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStateBounds(t *testing.T) {
	var conds []any
	for range 40 {
		conds = append(conds, map[string]any{"type": "T", "status": "True", "message": strings.Repeat("é", 300)})
	}
	s := State(obj("example.com/v1", "Thing", map[string]any{"status": map[string]any{"conditions": conds}}))
	if len(s.Conditions) != maxConditions {
		t.Fatalf("kept %d conditions, want %d", len(s.Conditions), maxConditions)
	}
	if m := s.Conditions[0].Message; len(m) > maxMessage || !utf8.ValidString(m) || !strings.HasSuffix(m, "...") {
		t.Errorf("message not cut to %d bytes on a character boundary: %d bytes, valid %v", maxMessage, len(m), utf8.ValidString(m))
	}
}

func TestStatus(t *testing.T) {
	raw, tooLarge, err := Status(obj("apps/v1", "Deployment", map[string]any{"status": map[string]any{"readyReplicas": int64(2)}}))
	if err != nil || tooLarge || string(raw) != `{"status":{"readyReplicas":2}}` {
		t.Errorf("Status() = %s, %v, %v", raw, tooLarge, err)
	}
	if raw, _, _ := Status(obj("v1", "ConfigMap", nil)); raw != nil {
		t.Errorf("a ConfigMap mirrors %s, want nothing", raw)
	}
	big := obj("example.com/v1", "Thing", map[string]any{"status": map[string]any{"blob": strings.Repeat("x", placementv1beta1.MaxBackReportedStatusBytes)}})
	if raw, tooLarge, _ := Status(big); raw != nil || !tooLarge {
		t.Errorf("a status over the limit: raw %d bytes, tooLarge %v", len(raw), tooLarge)
	}
}
