package apiserver

import (
	"reflect"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// countingConverter records the conversions it is asked for and converts
// by setting the apiVersion, as a CRD without a conversion webhook does.
type countingConverter struct{ calls int }

func (c *countingConverter) Convert(in, out, _ interface{}) error {
	c.calls++
	u := in.(*unstructured.Unstructured).DeepCopy()
	u.SetAPIVersion(out.(*unstructured.Unstructured).GetAPIVersion())
	out.(*unstructured.Unstructured).SetUnstructuredContent(u.UnstructuredContent())
	return nil
}

func (c *countingConverter) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (c *countingConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// The storage codec's converter hands an object decoded in the version
// asked for over as it is (its decoder coerced it), and converts and
// coerces one of another version.
func TestStorageConverterHandsOverAnObjectOfTheVersionAskedFor(t *testing.T) {
	object := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{"spec": {
			Generic:    structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{"known": {Generic: structuralschema.Generic{Type: "string"}}},
		}}}
	schemas := map[string]*structuralschema.Structural{"v1": &object, "v2": &object}
	delegate := &countingConverter{}
	c := schemaCoercingConverter{delegate: delegate, validator: unstructuredSchemaCoercer{structuralSchemas: schemas,
		structuralSchemaGK: schema.GroupKind{Group: "example.io", Kind: "Thing"}}}
	decoded := func(version string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/" + version, "kind": "Thing",
			"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"known": "x", "unknown": "y"}}}
	}
	into := func(version string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/" + version, "kind": "Thing"}}
	}

	in, out := decoded("v1"), into("v1")
	if err := c.Convert(in, out, nil); err != nil {
		t.Fatal(err)
	}
	if delegate.calls != 0 || !reflect.DeepEqual(out.Object, in.Object) {
		t.Errorf("same version: the delegate converted %d times, out = %v; want no conversion and the decoded object as it is", delegate.calls, out.Object)
	}

	out = into("v2")
	if err := c.Convert(decoded("v1"), out, nil); err != nil {
		t.Fatal(err)
	}
	spec, _, _ := unstructured.NestedMap(out.Object, "spec")
	if delegate.calls != 1 || out.GetAPIVersion() != "example.io/v2" || !reflect.DeepEqual(spec, map[string]any{"known": "x"}) {
		t.Errorf("another version: the delegate converted %d times, out = %v; want one conversion to v2, the unknown field pruned", delegate.calls, out.Object)
	}
}

// recordingConverter records the objects it is asked to convert and hands
// them back as they are.
type recordingConverter struct{ got []runtime.Object }

func (r *recordingConverter) Convert(_, _, _ interface{}) error { return nil }

func (r *recordingConverter) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	r.got = append(r.got, in)
	return in, nil
}

func (r *recordingConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// The response codec's converter gives a list whose items are all in the
// version asked for to the unsafe converter, its items not copied and its
// top level copied; anything else goes to the safe converter.
func TestResponseConverterCopiesOnlyWhatConversionChanges(t *testing.T) {
	thing := func(version string) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/" + version, "kind": "Thing",
			"metadata": map[string]any{"name": "a"}}}
	}
	list := func(versions ...string) *unstructured.UnstructuredList {
		l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "ThingList"}}
		for _, v := range versions {
			l.Items = append(l.Items, thing(v))
		}
		return l
	}
	v1 := schema.GroupVersion{Group: "example.io", Version: "v1"}
	for _, tc := range []struct {
		name     string
		in       runtime.Object
		wantSafe bool
	}{
		{name: "a list in the version asked for", in: list("v1", "v1")},
		{name: "an empty list", in: list()},
		{name: "a list with an item to convert", in: list("v1", "v2"), wantSafe: true},
		{name: "an object", in: &unstructured.Unstructured{Object: thing("v1").Object}, wantSafe: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			safe, unsafe := &recordingConverter{}, &recordingConverter{}
			if _, err := (listEncodingConverter{ObjectConvertor: safe, unsafe: unsafe}).ConvertToVersion(tc.in, v1); err != nil {
				t.Fatal(err)
			}
			if tc.wantSafe {
				if len(safe.got) != 1 || safe.got[0] != tc.in || len(unsafe.got) != 0 {
					t.Fatalf("safe converter got %d, unsafe %d; want the input in the safe one only", len(safe.got), len(unsafe.got))
				}
				return
			}
			if len(safe.got) != 0 || len(unsafe.got) != 1 {
				t.Fatalf("safe converter got %d, unsafe %d; want one list in the unsafe one only", len(safe.got), len(unsafe.got))
			}
			in, got := tc.in.(*unstructured.UnstructuredList), unsafe.got[0].(*unstructured.UnstructuredList)
			if got == in || reflect.ValueOf(got.Object).UnsafePointer() == reflect.ValueOf(in.Object).UnsafePointer() {
				t.Error("the list's top level was handed over itself; want a copy the conversion may change")
			}
			if len(in.Items) > 0 && &got.Items[0] != &in.Items[0] {
				t.Error("the items were copied; want them handed over as they are")
			}
			if !reflect.DeepEqual(got.Object, in.Object) {
				t.Errorf("top level %v, want %v", got.Object, in.Object)
			}
		})
	}
}
