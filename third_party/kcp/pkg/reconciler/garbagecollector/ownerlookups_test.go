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
	"net/http"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Fleetplane: the garbage collector deletes what an owner it does not find
// owns; only the API's own NotFound about that owner may say it is gone.
func TestObjectNotFoundTellsAGoneOwnerFromAnUnservedResource(t *testing.T) {
	placements := schema.GroupResource{Group: "placement.kubernetes-fleet.io", Resource: "clusterresourceplacements"}
	gone := kerrors.NewNotFound(placements, "app")
	if err := objectNotFound("app", gone); !kerrors.IsNotFound(err) {
		t.Errorf("the API's NotFound about the owner: %v, want it kept", err)
	}
	// What client-go makes of the plain 404 of a path nothing serves: the
	// metadata client builds absolute paths, so neither the resource nor
	// the name is filled in; a client that fills them in is covered too.
	for _, unserved := range []error{
		kerrors.NewGenericServerResponse(http.StatusNotFound, "GET", schema.GroupResource{}, "", "404 page not found", 0, true),
		kerrors.NewGenericServerResponse(http.StatusNotFound, "GET",
			schema.GroupResource{Group: "placement.kubernetes-fleet.io", Resource: "hijacks"}, "app", "404 page not found", 0, true),
	} {
		err := objectNotFound("app", unserved)
		if kerrors.IsNotFound(err) || !kerrors.IsServiceUnavailable(err) {
			t.Errorf("a resource not served: %v, want a retriable error that is not NotFound", err)
		}
	}
	if err := objectNotFound("app", kerrors.NewNotFound(placements, "other")); kerrors.IsNotFound(err) {
		t.Errorf("a NotFound about another object: %v, want it not taken as the owner's", err)
	}
	if err := objectNotFound("app", nil); err != nil {
		t.Errorf("no error: %v", err)
	}
}
