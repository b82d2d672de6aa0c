package apiserver

import (
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// Every serializer kcp or this handler builds coerces embedded resources,
// whether or not it was given the parts of the schemas that lead to them:
// kcp's virtual workspaces build theirs with NewUnstructuredNegotiatedSerializer.
func TestEveryDecoderCoercesEmbeddedResources(t *testing.T) {
	embedded := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		Extensions: structuralschema.Extensions{XEmbeddedResource: true, XPreserveUnknownFields: true}}
	schemas := map[string]*structuralschema.Structural{"v1": {
		Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{"spec": {
			Generic:    structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{"manifests": {Generic: structuralschema.Generic{Type: "array"}, Items: &embedded}},
		}},
	}}
	gk := schema.GroupKind{Group: "example.io", Kind: "Work"}
	withParts := NewUnstructuredNegotiatedSerializer(nil, unstructuredCreator{}, nil, schemas, gk, false)
	if withParts.embeddedSchemas["v1"] == nil {
		t.Error("NewUnstructuredNegotiatedSerializer: its decoders would walk the whole schema of every object, not the way to its embedded resources")
	}
	withoutParts := withParts
	withoutParts.embeddedSchemas = nil
	bad := []byte(`{"apiVersion":"example.io/v1","kind":"Work","metadata":{"name":"w"},"spec":{"manifests":[{"apiVersion":1,"kind":"ConfigMap"}]}}`)
	for name, s := range map[string]unstructuredNegotiatedSerializer{"NewUnstructuredNegotiatedSerializer": withParts, "without the parts": withoutParts} {
		d := s.DecoderToVersion(json.NewSerializerWithOptions(json.DefaultMetaFactory, unstructuredCreator{}, crdserverscheme.NewUnstructuredObjectTyper(), json.SerializerOptions{}), schema.GroupVersion{Group: "example.io", Version: "v1"})
		_, _, err := d.Decode(bad, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "must be a string") {
			t.Errorf("%s: decoding an embedded resource whose apiVersion is a number: got %v, want it refused (must be a string)", name, err)
		}
	}
}
