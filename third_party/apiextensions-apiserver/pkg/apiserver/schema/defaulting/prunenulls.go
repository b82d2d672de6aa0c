/*
Copyright 2020 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package defaulting

import structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

func isNonNullableNonDefaultableNull(x interface{}, s *structuralschema.Structural) bool {
	return x == nil && s != nil && s.Generic.Nullable == false && s.Default.Object == nil
}

// PruneNonNullableNullsWithoutDefaults removes non-nullable
// non-defaultable null values from object.
//
// Non-nullable nulls that have a default are left alone here and will
// be defaulted later.
//
// Fleetplane: the API server runs this on every custom resource it decodes
// (from a request, or from etcd once per watcher). It no longer copies the
// schema of every field to the heap, nor looks up the schema of scalar
// fields, which it neither prunes nor descends into; without a schema
// nothing below is known to be non-nullable.
func PruneNonNullableNullsWithoutDefaults(x interface{}, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]interface{}:
		for k, v := range x {
			switch v.(type) {
			case nil, map[string]interface{}, []interface{}:
			default:
				continue
			}
			if prop, ok := s.Properties[k]; ok {
				pruneNullProperty(x, k, v, prop)
			} else if s.AdditionalProperties != nil {
				pruneNullField(x, k, v, s.AdditionalProperties.Structural)
			}
		}
	case []interface{}:
		for i := range x {
			PruneNonNullableNullsWithoutDefaults(x[i], s.Items)
		}
	default:
		// scalars, do nothing
	}
}

// pruneNullProperty takes the property's schema by value: the copy read
// from the map of properties then stays on the stack (inlined, it would
// move to the heap, the recursion's parameter pointing at it).
//
//go:noinline
func pruneNullProperty(x map[string]interface{}, k string, v interface{}, s structuralschema.Structural) {
	pruneNullField(x, k, v, &s)
}

// pruneNullField removes the field k of x, of value v, if it is a null
// its schema s does not allow, or prunes within it.
func pruneNullField(x map[string]interface{}, k string, v interface{}, s *structuralschema.Structural) {
	if isNonNullableNonDefaultableNull(v, s) {
		delete(x, k)
	} else {
		PruneNonNullableNullsWithoutDefaults(v, s)
	}
}
