/*
Copyright 2026 The Fleetplane Authors.

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

package validation

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
)

func replicasSchema() *apiextensions.JSONSchemaProps {
	minimum := float64(0)
	return &apiextensions.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensions.JSONSchemaProps{
			"replicas": {Type: "integer", Minimum: &minimum},
		},
	}
}

// The schema is read at the first validation, once, and validates as the
// eagerly built validator does.
func TestLazySchemaValidatorBuildsAtFirstUse(t *testing.T) {
	reads := 0
	lazy := NewLazySchemaValidator(func() (*apiextensions.JSONSchemaProps, error) {
		reads++
		return replicasSchema(), nil
	})
	if reads != 0 {
		t.Fatalf("schema read %d times before any validation", reads)
	}
	eager, _, err := NewSchemaValidator(replicasSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []map[string]interface{}{{"replicas": int64(2)}, {"replicas": int64(-1)}, {"replicas": "two"}} {
		want := ValidateCustomResource(nil, obj, eager)
		got := ValidateCustomResource(nil, obj, lazy)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: lazy %v, eager %v", obj, got, want)
		}
		gotUpdate := lazy.ValidateUpdate(obj, map[string]interface{}{"replicas": int64(1)})
		wantUpdate := eager.ValidateUpdate(obj, map[string]interface{}{"replicas": int64(1)})
		if gotUpdate.IsValid() != wantUpdate.IsValid() {
			t.Errorf("%v update: lazy valid %v, eager valid %v", obj, gotUpdate.IsValid(), wantUpdate.IsValid())
		}
	}
	if reads != 1 {
		t.Errorf("schema read %d times, want once", reads)
	}
}

// A schema that cannot be read fails every validation with the reason.
func TestLazySchemaValidatorReportsUnusableSchema(t *testing.T) {
	lazy := NewLazySchemaValidator(func() (*apiextensions.JSONSchemaProps, error) {
		return nil, errors.New("bad default")
	})
	errs := ValidateCustomResource(nil, map[string]interface{}{}, lazy)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "could not build the validation schema of this resource: bad default") {
		t.Fatalf("errors: %v", errs)
	}
	if lazy.ValidateUpdate(map[string]interface{}{}, map[string]interface{}{}).IsValid() {
		t.Fatal("an update validated against an unusable schema")
	}
}
