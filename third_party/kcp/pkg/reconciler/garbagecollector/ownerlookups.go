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

package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"slices"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// Fleetplane: servedLookups is the metadata client of one workspace's
// garbage collector. The collector takes an owner that a live lookup does
// not find as gone, and deletes what it owns; a lookup also answers
// NotFound when the owner's resource is not served at that path (the
// workspace's bindings not yet read after a restart, or a kind mapped to
// another workspace's resource name), which says nothing about the owner.
// Such answers are returned as errors, which the collector retries.
type servedLookups struct{ metadata.Interface }

func (c servedLookups) Resource(r schema.GroupVersionResource) metadata.Getter {
	return servedResource{c.Interface.Resource(r)}
}

type servedResource struct{ metadata.Getter }

func (r servedResource) Namespace(ns string) metadata.ResourceInterface {
	return servedNamespaced{r.Getter.Namespace(ns)}
}

func (r servedResource) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	o, err := r.Getter.Get(ctx, name, opts, subresources...)
	return o, objectNotFound(name, err)
}

type servedNamespaced struct{ metadata.ResourceInterface }

func (r servedNamespaced) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	o, err := r.ResourceInterface.Get(ctx, name, opts, subresources...)
	return o, objectNotFound(name, err)
}

// objectNotFound keeps a NotFound the API answered about the object asked
// for, and turns any other (the server's plain "404 page not found" for a
// path nothing serves, which the client reports with an
// UnexpectedServerResponse cause) into an error that is not one.
func objectNotFound(name string, err error) error {
	var status kerrors.APIStatus
	if !kerrors.IsNotFound(err) || !errors.As(err, &status) {
		return err
	}
	details := status.Status().Details
	if details != nil && details.Name == name && !slices.ContainsFunc(details.Causes, unexpectedResponse) {
		return err
	}
	return kerrors.NewServiceUnavailable(fmt.Sprintf("looking up %q: its resource is not served here (%v)", name, err))
}

func unexpectedResponse(c metav1.StatusCause) bool {
	return c.Type == metav1.CauseTypeUnexpectedServerResponse
}
