package objectmeta

import (
	"encoding/json"
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

func object(props map[string]structuralschema.Structural) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: props}
}

var (
	str      = structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	embedded = structuralschema.Structural{
		Generic:    structuralschema.Generic{Type: "object"},
		Extensions: structuralschema.Extensions{XEmbeddedResource: true, XPreserveUnknownFields: true},
	}
	// A Work-like schema: status and most of spec hold no embedded
	// resource, spec.manifests[*] are embedded resources.
	workLike = object(map[string]structuralschema.Structural{
		"spec": object(map[string]structuralschema.Structural{
			"name":      str,
			"manifests": {Generic: structuralschema.Generic{Type: "array"}, Items: &embedded},
			"byName":    {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &embedded}},
		}),
		"status": object(map[string]structuralschema.Structural{"conditions": {Generic: structuralschema.Generic{Type: "array"}, Items: &str}}),
	})
)

func TestEmbeddedResourcesKeepsOnlyTheWayToThem(t *testing.T) {
	plain := object(map[string]structuralschema.Structural{"spec": object(map[string]structuralschema.Structural{"a": str})})
	if got := EmbeddedResources(&plain); got != nil {
		t.Errorf("a schema without embedded resources: got %#v, want nil (nothing to coerce)", got)
	}
	if EmbeddedResources(nil) != nil {
		t.Error("nil schema: want nil")
	}

	got := EmbeddedResources(&workLike)
	if got == nil || len(got.Properties) != 1 {
		t.Fatalf("want only spec kept, got %#v", got)
	}
	spec := got.Properties["spec"]
	if _, ok := spec.Properties["name"]; ok {
		t.Error("spec.name holds no embedded resource and must not be walked")
	}
	if m := spec.Properties["manifests"]; m.Items == nil || !m.Items.XEmbeddedResource {
		t.Errorf("spec.manifests[*] must stay embedded resources: %#v", m)
	}
	if b := spec.Properties["byName"]; b.AdditionalProperties == nil || !b.AdditionalProperties.Structural.XEmbeddedResource {
		t.Errorf("spec.byName values must stay embedded resources: %#v", b)
	}
}

func TestEmbeddedResourcesPropertiesBeforeAdditionalProperties(t *testing.T) {
	s := object(map[string]structuralschema.Structural{"own": str})
	s.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: &embedded}
	got := EmbeddedResources(&s)
	own, ok := got.Properties["own"]
	if !ok || own.XEmbeddedResource {
		t.Errorf("a field with a property of its own must keep a schema that does nothing, not be coerced as an additional one: %#v", got)
	}
}

// Coercing with the embedded resources' part of a schema changes an object
// exactly as coercing with the whole schema does, and fails the same way.
func TestCoerceWithEmbeddedResourcesAsWithTheSchema(t *testing.T) {
	objects := []string{
		`{"spec":{"name":"x","manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","unknown":1,"creationTimestamp":null}}]},"status":{"conditions":["ok"]}}`,
		`{"spec":{"manifests":[{"apiVersion":1,"kind":"ConfigMap","metadata":{"name":"a"}}]}}`,
		`{"spec":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":1,"labels":{"a":"b"}}}]}}`,
		`{"spec":{"byName":{"one":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","generation":"x"}}}}}`,
		`{"spec":{"name":"x"},"status":{"conditions":["ok"]},"extra":{"metadata":{"name":1}}}`,
	}
	for _, drop := range []bool{false, true} {
		for _, o := range objects {
			var whole, part interface{}
			if err := json.Unmarshal([]byte(o), &whole); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(o), &part); err != nil {
				t.Fatal(err)
			}
			opts := CoerceOptions{DropInvalidFields: drop, ReturnUnknownFieldPaths: true}
			errWhole, unknownWhole := CoerceWithOptions(nil, whole, &workLike, false, opts)
			errPart, unknownPart := CoerceWithOptions(nil, part, EmbeddedResources(&workLike), false, opts)
			if (errWhole == nil) != (errPart == nil) || (errWhole != nil && errWhole.Error() != errPart.Error()) {
				t.Errorf("%s (drop %v): error %v with the schema, %v with its embedded resources", o, drop, errWhole, errPart)
			}
			if !reflect.DeepEqual(whole, part) || !reflect.DeepEqual(unknownWhole, unknownPart) {
				t.Errorf("%s (drop %v): coerced to %v (unknown %v) with the schema, %v (unknown %v) with its embedded resources", o, drop, whole, unknownWhole, part, unknownPart)
			}
		}
	}
}
