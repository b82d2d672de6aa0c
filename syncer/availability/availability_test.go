package availability

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want Result
	}{
		{"configmap", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, Available},
		{"clusterrole", `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: r}}`, Available},
		{"unknown kind", `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}`, NotTrackable},
		{"deployment rolled out", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3},
			status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3}}`, Available},
		{"deployment not observed", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 3}, spec: {replicas: 3},
			status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3}}`, NotYetAvailable},
		{"deployment with old pods left", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3},
			status: {observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3}}`, NotYetAvailable},
		{"deployment default one replica", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 1}, spec: {},
			status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}`, Available},
		{"statefulset mid update", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, spec: {replicas: 2},
			status: {observedGeneration: 1, updatedReplicas: 2, availableReplicas: 2, currentRevision: a, updateRevision: b}}`, NotYetAvailable},
		{"daemonset available", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds, generation: 1},
			status: {observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberAvailable: 2}}`, Available},
		{"job running", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {ready: 1}}`, Available},
		{"job pending", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {}}`, NotYetAvailable},
		{"clusterip service", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {clusterIP: 10.0.0.1}}`, Available},
		{"lb service pending", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer, clusterIP: 10.0.0.1}}`, NotYetAvailable},
		{"external name service", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: ExternalName, externalName: a.b}}`, NotTrackable},
		{"crd established", `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a.b.c},
			status: {conditions: [{type: Established, status: "True"}]}}`, Available},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.obj), &u.Object); err != nil {
				t.Fatal(err)
			}
			got, msg, err := Check(u)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Check() = %v (%s), want %v", got, msg, tc.want)
			}
		})
	}
}
