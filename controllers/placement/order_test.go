package placement

import (
	"reflect"
	"testing"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestSortSelected(t *testing.T) {
	id := func(group, version, kind, namespace, name string) placementv1beta1.ResourceIdentifier {
		return placementv1beta1.ResourceIdentifier{Group: group, Version: version, Kind: kind, Namespace: namespace, Name: name}
	}
	want := []placementv1beta1.ResourceIdentifier{
		id("", "v1", "Namespace", "", "app"),
		id("", "v1", "Namespace", "", "web"),
		id("", "v1", "Secret", "app", "token"),
		id("", "v1", "ConfigMap", "app", "a"),
		id("", "v1", "ConfigMap", "web", "a"),
		id("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", "widgets.example.com"),
		id("rbac.authorization.k8s.io", "v1", "ClusterRole", "", "reader"),
		id("rbac.authorization.k8s.io", "v1", "Role", "app", "reader"),
		id("", "v1", "Service", "app", "web"),
		id("apps", "v1", "Deployment", "app", "web"),
		// Kinds KubeFleet does not order: by group/version and kind.
		id("example.com", "v1", "Gadget", "app", "g"),
		id("example.com", "v1", "Widget", "app", "w"),
		id("placement.kubernetes-fleet.io", "v1beta1", "ResourceEnvelope", "app", "env"),
	}
	got := make([]placementv1beta1.ResourceIdentifier, len(want))
	for i := range want {
		got[i] = want[(i*7+3)%len(want)]
	}
	sortSelected(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sorted\n%v\nwant\n%v", got, want)
	}
}
