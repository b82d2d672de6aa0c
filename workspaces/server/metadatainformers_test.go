package server

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
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
