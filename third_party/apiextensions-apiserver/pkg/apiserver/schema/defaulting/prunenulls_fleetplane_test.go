package defaulting

import (
	"encoding/json"
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

func TestPruneNonNullableNullsWithoutDefaults(t *testing.T) {
	nullable := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string", Nullable: true}}
	plain := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	defaulted := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string", Default: structuralschema.JSON{Object: "d"}}}
	item := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{"a": plain, "n": nullable}}
	s := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
		"a": plain, "n": nullable, "d": defaulted, "s": plain,
		"list": {Generic: structuralschema.Generic{Type: "array"}, Items: &item},
		"map":  {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &plain}},
	}}
	var in, want interface{}
	if err := json.Unmarshal([]byte(`{"a":null,"n":null,"d":null,"s":"x","unknown":null,"list":[{"a":null,"n":null},{"a":"y"}],"map":{"k":null,"v":"z"}}`), &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"n":null,"d":null,"s":"x","unknown":null,"list":[{"n":null},{"a":"y"}],"map":{"v":"z"}}`), &want); err != nil {
		t.Fatal(err)
	}
	PruneNonNullableNullsWithoutDefaults(in, s)
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %v, want %v: nulls of non-nullable fields without a default go, nullable, defaulted and unknown ones stay", in, want)
	}
}
