package main

import (
	"testing"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func TestAddServedVersions(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "clusterresourceoverrides.placement.kubernetes-fleet.io"
	crd.Spec.Names.Kind = "ClusterResourceOverride"
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true}}
	if err := addServedVersions(crd); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range crd.Spec.Versions {
		got = append(got, v.Name)
		if v.Name != "v1beta1" && v.Storage {
			t.Errorf("only v1beta1 may be stored, %s is too", v.Name)
		}
	}
	if len(got) != 3 || got[1] != "v1" || got[2] != "v1alpha1" {
		t.Errorf("versions = %v, want [v1beta1 v1 v1alpha1]", got)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("versions sharing one schema need conversion strategy None, got %+v", crd.Spec.Conversion)
	}
}

func TestFixListTypes(t *testing.T) {
	v := &apisv1alpha1.APIResourceVersion{}
	schema := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"conditions": {Type: "array", XListType: ptr.To("atomic"), XListMapKeys: []string{"type"}},
		"ports":      {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"port"}},
	}}
	if err := v.SetSchema(schema); err != nil {
		t.Fatal(err)
	}
	if err := fixListTypes(v); err != nil {
		t.Fatal(err)
	}
	got, err := v.GetSchema()
	if err != nil {
		t.Fatal(err)
	}
	if keys := got.Properties["conditions"].XListMapKeys; len(keys) != 0 {
		t.Errorf("atomic list kept map keys %v", keys)
	}
	if keys := got.Properties["ports"].XListMapKeys; len(keys) != 1 {
		t.Errorf("map list lost its keys")
	}
}

func TestSchemaPrefixFollowsContent(t *testing.T) {
	a, _ := schemaPrefix(map[string]string{"a": "1"})
	b, _ := schemaPrefix(map[string]string{"a": "2"})
	a2, _ := schemaPrefix(map[string]string{"a": "1"})
	if a == b || a != a2 {
		t.Errorf("prefix must be stable for equal content and differ otherwise: %s %s %s", a, b, a2)
	}
}
