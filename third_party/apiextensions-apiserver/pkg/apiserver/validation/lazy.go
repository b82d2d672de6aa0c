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
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// NewLazySchemaValidator returns a validator that reads its schema and builds
// the validator at its first use (Fleetplane, see README): a server builds
// what serving an API needs for all of its versions at the API's first list,
// and kcp's own informers list every API, while an idle hub validates objects
// of a few kinds in one version. A schema that cannot be converted fails every
// validation with the reason.
func NewLazySchemaValidator(schema func() (*apiextensions.JSONSchemaProps, error)) SchemaValidator {
	return lazySchemaValidator(sync.OnceValues(func() (SchemaValidator, error) {
		props, err := schema()
		if err != nil {
			return nil, err
		}
		validator, _, err := NewSchemaValidator(props)
		return validator, err
	}))
}

type lazySchemaValidator func() (SchemaValidator, error)

func (l lazySchemaValidator) Validate(value interface{}, options ...ValidationOption) *validate.Result {
	validator, err := l()
	if err != nil {
		return unusableSchema(err)
	}
	return validator.Validate(value, options...)
}

func (l lazySchemaValidator) ValidateUpdate(new, old interface{}, options ...ValidationOption) *validate.Result {
	validator, err := l()
	if err != nil {
		return unusableSchema(err)
	}
	return validator.ValidateUpdate(new, old, options...)
}

func unusableSchema(err error) *validate.Result {
	return &validate.Result{Errors: []error{fmt.Errorf("the server could not build the validation schema of this resource: %w", err)}}
}
