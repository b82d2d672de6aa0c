package server

import (
	"reflect"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-dev/kcp/pkg/informer"
)

// The resource discovery of the metadata informers reads a CRD's group,
// names, scope, versions and Established condition; the schemas are dropped.
func TestCRDNamesOnlyKeepsWhatDiscoveryReads(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "team": "a"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true,
					Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
					AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}},
				{Name: "v1beta1", Served: false},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
		}},
	}
	got, err := crdNamesOnly(crd)
	if err != nil {
		t.Fatal(err)
	}
	kept := got.(*apiextensionsv1.CustomResourceDefinition)
	if kept.Spec.Group != "example.com" || kept.Spec.Names.Kind != "Widget" || kept.Spec.Names.Singular != "widget" ||
		kept.Spec.Scope != apiextensionsv1.NamespaceScoped || !apihelpers.IsCRDConditionTrue(kept, apiextensionsv1.Established) {
		t.Errorf("lost what discovery reads: %+v", kept)
	}
	if len(kept.Spec.Versions) != 2 || kept.Spec.Versions[0].Name != "v1" || !kept.Spec.Versions[0].Served || kept.Spec.Versions[1].Served {
		t.Errorf("versions: %+v", kept.Spec.Versions)
	}
	if kept.Spec.Versions[0].Schema != nil || kept.Spec.Versions[0].AdditionalPrinterColumns != nil || kept.Spec.Conversion != nil || kept.ManagedFields != nil ||
		len(kept.Annotations) != 1 {
		t.Errorf("schemas and the rest are kept: %+v", kept)
	}

	tombstone := cache.DeletedFinalStateUnknown{Key: "widgets.example.com", Obj: crd}
	if got, err := crdNamesOnly(tombstone); err != nil || got != any(tombstone) {
		t.Errorf("a tombstone: %v, %v", got, err)
	}
}

// kcp's garbage collector reads identity, owners and deletion; its
// permission-claim labeler and workspace mounts read labels and
// annotations of kcp's domain. The rest of the metadata is dropped.
func TestLeanMetadataKeepsWhatKcpReads(t *testing.T) {
	work := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "Work",
		"metadata": map[string]any{
			"name": "ws1.web-work", "namespace": "fleet-member-m1", "uid": "u-1", "resourceVersion": "7",
			"generation": int64(1), "creationTimestamp": "2026-11-26T14:29:48Z",
			"deletionTimestamp": "2026-11-26T15:00:00Z", "deletionGracePeriodSeconds": int64(0),
			"finalizers":      []any{"kubernetes-fleet.io/work-cleanup"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-0"}},
			"labels": map[string]any{"kubernetes-fleet.io/parent-CRP": "web",
				"claimed.internal.apis.kcp.io/abc": "def", "app": "web"},
			"annotations": map[string]any{"kcp.io/cluster": "ws1", "kcp.io/original-api-version": "v1",
				corev1.LastAppliedConfigAnnotation: "{}", "notkcp.io/x": "y"},
		},
	}}
	got, err := leanMetadata(work)
	if err != nil {
		t.Fatal(err)
	}
	lean := got.(*unstructured.Unstructured)
	if logicalcluster.From(lean) != "ws1" || lean.GetName() != "ws1.web-work" || lean.GetNamespace() != "fleet-member-m1" ||
		lean.GetUID() != "u-1" || lean.GetResourceVersion() != "7" || lean.GetKind() != "Work" ||
		lean.GetAPIVersion() != "placement.kubernetes-fleet.io/v1beta1" {
		t.Errorf("identity lost: %v", lean.Object)
	}
	if len(lean.GetOwnerReferences()) != 1 || lean.GetOwnerReferences()[0].UID != "u-0" ||
		len(lean.GetFinalizers()) != 1 || lean.GetDeletionTimestamp() == nil || lean.GetDeletionGracePeriodSeconds() == nil {
		t.Errorf("owners or deletion lost: %v", lean.Object)
	}
	if want := map[string]string{"claimed.internal.apis.kcp.io/abc": "def"}; !reflect.DeepEqual(lean.GetLabels(), want) {
		t.Errorf("labels %v, want %v", lean.GetLabels(), want)
	}
	if want := map[string]string{"kcp.io/cluster": "ws1", "kcp.io/original-api-version": "v1"}; !reflect.DeepEqual(lean.GetAnnotations(), want) {
		t.Errorf("annotations %v, want %v", lean.GetAnnotations(), want)
	}
	if lean.GetGeneration() != 0 || lean.GetCreationTimestamp() != (metav1.Time{}) {
		t.Errorf("kept what nobody reads: %v", lean.Object)
	}
	// On resync kcp's informers transform what they hold again.
	if again, _ := leanMetadata(lean); !reflect.DeepEqual(again, lean) {
		t.Errorf("a second pass changes the object: %v, then %v", lean.Object, again)
	}

	bare := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "labels": map[string]any{"app": "web"}}}}
	if got, _ := leanMetadata(bare); got.(*unstructured.Unstructured).Object["metadata"].(map[string]any)["labels"] != nil {
		t.Errorf("an empty label map is kept: %v", got)
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/c", Obj: bare}
	if got, err := leanMetadata(tombstone); err != nil || got != any(tombstone) {
		t.Errorf("a tombstone: %v, %v", got, err)
	}
}

// gvrList is a GVRSource of a fixed list, handing out a new map each call as
// kcp's CRD source does.
type gvrList []schema.GroupVersionResource

func (l gvrList) GVRs() map[schema.GroupVersionResource]informer.GVRPartialMetadata {
	m := map[schema.GroupVersionResource]informer.GVRPartialMetadata{}
	for _, gvr := range l {
		m[gvr] = informer.GVRPartialMetadata{}
	}
	return m
}
func (gvrList) Ready() bool                { return true }
func (gvrList) Subscribe() <-chan struct{} { return nil }

// A resource left out is left out in every version; others of its group,
// and its namesakes in other groups, stay.
func TestWithoutResourcesLeavesOutEveryVersionOfThem(t *testing.T) {
	works := func(group, version string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: "works"}
	}
	bindings := schema.GroupVersionResource{Group: "fleet.example", Version: "v1", Resource: "bindings"}
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	s := withoutResources{
		GVRSource: gvrList{works("fleet.example", "v1"), works("fleet.example", "v2"), works("other.example", "v1"), bindings, configmaps},
		left:      sets.New(schema.GroupResource{Group: "fleet.example", Resource: "works"}),
	}
	for i := 0; i < 2; i++ { // the source's map is not kept changed
		got := sets.KeySet(s.GVRs())
		want := sets.New(works("other.example", "v1"), bindings, configmaps)
		if !got.Equal(want) {
			t.Fatalf("GVRs() = %v, want %v", got.UnsortedList(), want.UnsortedList())
		}
	}
}
