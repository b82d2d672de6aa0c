package pruning

import (
	"encoding/json"
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

func TestPruneNestedProperties(t *testing.T) {
	str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	inner := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{"b": str}}
	preserved := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true},
		Properties: map[string]structuralschema.Structural{"known": inner}}
	s := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
		"spec": {Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{"a": inner, "list": {Generic: structuralschema.Generic{Type: "array"}, Items: &inner}}},
		"bag":  preserved,
	}}
	var in, want interface{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"spec":{"a":{"b":"x","c":"y"},"list":[{"b":"1","z":2}],"gone":1},"bag":{"any":1,"known":{"b":"k","c":"drop"}},"top":1}`), &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"spec":{"a":{"b":"x"},"list":[{"b":"1"}]},"bag":{"any":1,"known":{"b":"k"}}}`), &want); err != nil {
		t.Fatal(err)
	}
	unknown := PruneWithOptions(in, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %v, want %v", in, want)
	}
	wantUnknown := []string{"bag.known.c", "spec.a.c", "spec.gone", "spec.list[0].z", "top"}
	if !reflect.DeepEqual(unknown, wantUnknown) {
		t.Errorf("unknown fields %v, want %v", unknown, wantUnknown)
	}
}
