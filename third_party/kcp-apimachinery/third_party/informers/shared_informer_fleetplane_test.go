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

package informers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestResyncedObjectsAreNotTransformedAgain(t *testing.T) {
	var transformed []string
	transform := func(obj any) (any, error) {
		transformed = append(transformed, obj.(*corev1.ConfigMap).Name)
		return obj, nil
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	}
	deltas := cache.Deltas{
		{Type: cache.Added, Object: cm("added")},
		{Type: cache.Updated, Object: cm("updated")},
		{Type: cache.Sync, Object: cm("resynced")},
	}
	if err := processDeltas(cache.ResourceEventHandlerFuncs{}, store, transform, deltas, false); err != nil {
		t.Fatal(err)
	}
	if want := []string{"added", "updated"}; len(transformed) != 2 || transformed[0] != want[0] || transformed[1] != want[1] {
		t.Errorf("transformed %v, want %v: a resync hands over the store's own object", transformed, want)
	}
	if len(store.List()) != 3 {
		t.Errorf("store holds %d objects, want 3", len(store.List()))
	}
}
