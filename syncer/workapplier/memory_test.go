package workapplier

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// BenchmarkCachedObjectMemory measures what one placed object costs the
// syncer's member cache: the object as the member's API server returns it
// (stamped and with its last-applied copy, as the syncer writes it),
// decoded, stripped of managed fields and kept in an indexer, as the
// cache's informers keep it. Reported as bytes of live heap per object.
func BenchmarkCachedObjectMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		obj  any
	}{
		{"ConfigMap", &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "settings"},
			Data:       map[string]string{"app.properties": "color=blue\nsize=10\nmode=fast\n"}}},
		{"Deployment", sampleDeployment()},
	} {
		b.Run(c.name, func(b *testing.B) {
			raw := placedJSON(b, c.obj)
			const objects = 1000
			for range b.N {
				b.ReportMetric(heapPerObject(b, raw, objects), "B/object")
			}
		})
	}
}

// heapPerObject fills an indexer with n copies of the object and returns
// the live heap they add, per object.
func heapPerObject(b *testing.B, raw []byte, n int) float64 {
	strip := crcache.TransformStripManagedFields()
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	before := liveHeap()
	for i := range n {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
		obj.SetName(fmt.Sprintf("%s-%d", obj.GetName(), i))
		obj.SetUID(types.UID(fmt.Sprintf("9b7a1f2c-3d4e-4f50-8a6b-%012d", i)))
		stripped, err := strip(obj)
		if err != nil {
			b.Fatal(err)
		}
		if err := indexer.Add(stripped); err != nil {
			b.Fatal(err)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(indexer)
	return float64(after-before) / float64(n)
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// placedJSON is the object as the member returns it once the syncer placed
// it: the syncer's stamps, its last-applied copy, server-set metadata and
// one managed-fields entry (which the cache drops).
func placedJSON(b *testing.B, obj any) []byte {
	raw, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		b.Fatal(err)
	}
	o := owner{identity: "2x7k9c4mzq1v8w3n/settings-placement"}
	o.stamp(u, true)
	annotations := u.GetAnnotations()
	annotations[placementv1beta1.ManifestHashAnnotation] = "4f0c2b8e6a1d3f5b7c9e0a2d4f6b8c0e2a4c6e8f0b2d4f6a8c0e2b4d6f8a0c2e"
	u.SetAnnotations(annotations)
	if _, err := withLastApplied(u); err != nil {
		b.Fatal(err)
	}
	u.SetUID("9b7a1f2c-3d4e-4f50-8a6b-000000000000")
	u.SetResourceVersion("123456")
	u.SetGeneration(1)
	u.SetCreationTimestamp(metav1.Now())
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: placementv1beta1.GroupVersion.String(), Kind: "AppliedWork",
		Name: "settings-placement-work", UID: "0c5d7e9f-1a2b-4c3d-8e4f-5a6b7c8d9e0f", BlockOwnerDeletion: ptr.To(false)}})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "fleetplane-3c1d", Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: u.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}})
	out, err := u.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func sampleDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "registry.example.com/web:1.4.2",
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				}}},
			},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}},
	}
}
