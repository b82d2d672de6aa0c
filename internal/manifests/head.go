// Package manifests reads what identifies a placed manifest exactly as a
// member cluster's API server does.
package manifests

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// Head is what identifies a manifest: its kind, name and namespace, read
// with the exact keys the member's API server reads.
type Head struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
}

// GroupVersionKind parses the head's apiVersion and kind.
func (h Head) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
}

// identityKeys are the keys whose letter case decides what a manifest is:
// Go's encoding/json matches struct fields case-insensitively and takes the
// last of duplicate keys, the member's API server reads keys exactly, so a
// manifest holding {"kind": "CustomResourceDefinition", "Kind": "ConfigMap"}
// is a ConfigMap to one reader and a CRD to the other.
var identityKeys = map[string][]string{
	"":         {"apiVersion", "kind", "metadata"},
	"metadata": {"name", "namespace", "generateName", "labels", "annotations", "ownerReferences"},
}

// ReadHead reads a manifest's head with exact keys and refuses a manifest
// whose top level or metadata repeats a key, or holds a key that differs
// from apiVersion, kind, metadata, or from metadata's name, namespace,
// generateName, labels, annotations and ownerReferences only in letter case.
func ReadHead(raw []byte) (Head, error) {
	top, err := strictObject(raw, "")
	if err != nil {
		return Head{}, err
	}
	var h Head
	if err := stringField(top, "apiVersion", &h.APIVersion); err != nil {
		return Head{}, err
	}
	if err := stringField(top, "kind", &h.Kind); err != nil {
		return Head{}, err
	}
	if md, ok := top["metadata"]; ok && string(md) != "null" {
		meta, err := strictObject(md, "metadata")
		if err != nil {
			return Head{}, err
		}
		if err := stringField(meta, "name", &h.Name); err != nil {
			return Head{}, fmt.Errorf("metadata.%w", err)
		}
		if err := stringField(meta, "namespace", &h.Namespace); err != nil {
			return Head{}, fmt.Errorf("metadata.%w", err)
		}
	}
	return h, nil
}

// strictObject decodes one JSON object level, refusing duplicate keys and
// case variants of the level's identity keys.
func strictObject(raw []byte, level string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	strict, err := sigsjson.UnmarshalStrict(raw, &obj, sigsjson.DisallowDuplicateFields)
	where := "the manifest"
	if level != "" {
		where = "the manifest's " + level
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s is not a JSON object: %v", where, err)
	case len(strict) > 0:
		return nil, fmt.Errorf("%s repeats a key (%v): every key may appear once", where, strict[0])
	case obj == nil:
		return nil, fmt.Errorf("%s is not a JSON object", where)
	}
	for key := range obj {
		for _, exact := range identityKeys[level] {
			if key != exact && strings.EqualFold(key, exact) {
				return nil, fmt.Errorf("%s has the key %q, a variant of %q: keys are read exactly; spell it %q", where, key, exact, exact)
			}
		}
	}
	return obj, nil
}

func stringField(obj map[string]json.RawMessage, key string, into *string) error {
	raw, ok := obj[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s is not a string", key)
	}
	return nil
}
