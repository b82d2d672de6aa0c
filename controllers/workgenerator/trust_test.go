package workgenerator

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
)

func controllerRef(name, uid string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{Kind: "ClusterResourcePlacement", Name: name, UID: types.UID("uid-" + uid), Controller: ptr.To(true)}}
}

func TestVerifyOrigin(t *testing.T) {
	placement := &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-web"}}
	member := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	grantAll := func(*clusterv1beta1.MemberCluster) bool { return true }
	tests := []struct {
		name      string
		placement placementv1beta1.PlacementObj
		mutate    func(b placementv1beta1.BindingObj, group []placementv1beta1.ResourceSnapshotObj)
		member    *clusterv1beta1.MemberCluster
		granted   func(*clusterv1beta1.MemberCluster) bool
		want      string // "" means trusted
	}{
		{name: "made by the scheduler for its placement", placement: placement, member: member, granted: grantAll},
		{name: "placement gone", member: member, granted: grantAll, want: "its placement web does not exist"},
		{name: "no controller", placement: placement, member: member, granted: grantAll, want: "not made by the scheduler",
			mutate: func(b placementv1beta1.BindingObj, _ []placementv1beta1.ResourceSnapshotObj) {
				b.SetOwnerReferences(nil)
			}},
		{name: "controlled by an earlier placement of the same name", placement: placement, member: member, granted: grantAll, want: "not made by the scheduler",
			mutate: func(b placementv1beta1.BindingObj, _ []placementv1beta1.ResourceSnapshotObj) {
				b.SetOwnerReferences(controllerRef("web", "old"))
			}},
		{name: "a snapshot of someone else", placement: placement, member: member, granted: grantAll, want: "resource snapshot web-3-1 does not belong to placement web",
			mutate: func(_ placementv1beta1.BindingObj, group []placementv1beta1.ResourceSnapshotObj) {
				group[1].SetOwnerReferences(nil)
			}},
		{name: "cluster gone", placement: placement, granted: grantAll, want: "member cluster m1 does not exist"},
		{name: "cluster not granted", placement: placement, member: member, granted: func(*clusterv1beta1.MemberCluster) bool { return false },
			want: "member cluster m1 is not granted to this workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := binding("")
			b.SetOwnerReferences(controllerRef("web", "web"))
			group := snapshotGroup("", 2)
			for _, s := range group {
				s.SetOwnerReferences(controllerRef("web", "web"))
			}
			if tc.mutate != nil {
				tc.mutate(b, group)
			}
			err := verifyOrigin(tc.placement, b, group, tc.member, tc.granted)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want the binding trusted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckPermissions(t *testing.T) {
	o := origin{workspace: workspace, binding: binding("")}
	works := func(raw string) []*placementv1beta1.Work {
		s := snapshotGroup("", 1)[0]
		s.SetResourceSnapshotSpec(placementv1beta1.ResourceSnapshotSpec{SelectedResources: []placementv1beta1.ResourceContent{
			{RawExtension: runtime.RawExtension{Raw: []byte(raw)}},
		}})
		ws, err := o.works(0, s, overrides.Set{}, overrides.Cluster{})
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"}}`
	if err := checkPermissions(works(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"app"}}`), tenancy.Permissions{}, "m1"); err != nil {
		t.Errorf("namespaced objects: %v", err)
	}
	for what, raw := range map[string]string{
		"a CRD":                crd,
		"a CRD in an envelope": `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourceEnvelope","metadata":{"name":"e"},"data":{"crd":` + crd + `}}`,
	} {
		if err := checkPermissions(works(raw), tenancy.Permissions{}, "m1"); err == nil || !strings.Contains(err.Error(), "CustomResourceDefinition widgets.example.com cannot be placed on member cluster m1") {
			t.Errorf("%s without permission: err = %v", what, err)
		}
		if err := checkPermissions(works(raw), tenancy.Permissions{CustomResourceDefinitions: true}, "m1"); err != nil {
			t.Errorf("%s with permission: %v", what, err)
		}
	}
}
