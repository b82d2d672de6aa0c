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

package informer

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Fleetplane: a CRD whose names were refused serves nothing and maps nothing:
// it must not take a kind in the REST mapper every garbage collector shares.
func TestOnlyEstablishedCRDsAreIndexed(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group:    "placement.kubernetes-fleet.io",
		Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "hijacks", Kind: "ClusterResourcePlacement"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true}, {Name: "v1", Served: false}},
	}}
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse, Reason: "KindConflict"},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse},
	}
	if keys, err := byGroupVersionResourceIndexFunc(crd); err != nil || len(keys) != 0 {
		t.Errorf("a CRD not established is indexed as %v (%v)", keys, err)
	}
	crd.Status.Conditions[1].Status = apiextensionsv1.ConditionTrue
	keys, err := byGroupVersionResourceIndexFunc(crd)
	if err != nil || len(keys) != 1 || keys[0] != "placement.kubernetes-fleet.io/v1beta1/hijacks" {
		t.Errorf("an established CRD is indexed as %v (%v), want its served version only", keys, err)
	}
}
