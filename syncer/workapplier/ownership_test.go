package workapplier

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func teamWork(takeOver string) *placementv1beta1.Work {
	return &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{
		Name: "2abc.app.web-work", Namespace: "fleet-member-m1",
		Labels: map[string]string{placementv1beta1.WorkspaceLabel: "2abc", placementv1beta1.ParentNamespaceLabel: "app", placementv1beta1.PlacementTrackingLabel: "web"},
		Annotations: map[string]string{placementv1beta1.WorkspacePathAnnotation: "root:teams:a", placementv1beta1.TenantAnnotation: "true",
			placementv1beta1.TakeOverNamespacesAnnotation: takeOver},
	}}
}

func TestOwnerOf(t *testing.T) {
	team := ownerOf(teamWork("legacy-*,old"))
	if team.identity != "2abc/app/web" || !team.tenant || team.path != "root:teams:a" || len(team.takeOver) != 2 {
		t.Errorf("team Work owner = %+v", team)
	}
	crp := teamWork("")
	crp.Labels[placementv1beta1.ParentNamespaceLabel] = ""
	if o := ownerOf(crp); o.identity != "2abc/web" || o.takeOver != nil {
		t.Errorf("CRP Work owner = %+v", o)
	}
	if team.manager == ownerOf(crp).manager || len(team.manager) > 128 {
		t.Errorf("field managers %q and %q must differ per placement and be short", team.manager, ownerOf(crp).manager)
	}
	byHand := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "fleet-member-m1"}}
	if o := ownerOf(byHand); o.identity != "work:fleet-member-m1/w" || o.tenant {
		t.Errorf("hand-made Work owner = %+v", o)
	}
}

func object(kind, namespace, name string, annotations map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
	o.SetNamespace(namespace)
	o.SetName(name)
	o.SetAnnotations(annotations)
	return o
}

func TestTeamRules(t *testing.T) {
	team := ownerOf(teamWork("legacy-*"))
	platform := ownerOf(&placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{placementv1beta1.WorkspaceLabel: "fleet", placementv1beta1.PlacementTrackingLabel: "p"}}})
	owned := func(ws string) *unstructured.Unstructured {
		return object("Namespace", "", "ns", map[string]string{placementv1beta1.NamespaceOwnerAnnotation: ws, placementv1beta1.NamespaceOwnerPathAnnotation: "root:teams:" + ws})
	}
	tests := []struct {
		name       string
		check      func() (string, string, bool)
		wantReason string // "" means allowed
	}{
		{"a namespace that does not exist yet", func() (string, string, bool) { return team.mayUseNamespace("ns", nil) }, ""},
		{"the workspace's own namespace", func() (string, string, bool) { return team.mayUseNamespace("ns", owned("2abc")) }, ""},
		{"another workspace's namespace", func() (string, string, bool) { return team.mayUseNamespace("ns", owned("9xyz")) },
			placementv1beta1.ApplyResultFailedToTakeOver},
		{"a namespace no placement created", func() (string, string, bool) { return team.mayUseNamespace("ns", owned("")) }, placementv1beta1.ApplyResultNotTakenOver},
		{"a namespace a grant lets the team adopt", func() (string, string, bool) { return team.mayUseNamespace("legacy-app", owned("")) }, ""},
		{"the platform places anywhere", func() (string, string, bool) { return platform.mayUseNamespace("ns", owned("9xyz")) }, ""},
		{"adopting an object outside the takeover namespaces", func() (string, string, bool) {
			return team.mayAdopt(object("ConfigMap", "platform-system", "cfg", nil))
		}, placementv1beta1.ApplyResultNotTakenOver},
		{"adopting a namespace no placement created", func() (string, string, bool) {
			return team.mayAdopt(object("Namespace", "", "platform-system", nil))
		}, placementv1beta1.ApplyResultNotTakenOver},
		{"adopting inside a takeover namespace", func() (string, string, bool) {
			return team.mayAdopt(object("ConfigMap", "legacy-app", "cfg", nil))
		}, ""},
		{"the platform adopts as its apply strategy says", func() (string, string, bool) {
			return platform.mayAdopt(object("ConfigMap", "platform-system", "cfg", nil))
		}, ""},
		{"a team places a ClusterRole", func() (string, string, bool) {
			return team.mayPlaceKind(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, true)
		}, placementv1beta1.ApplyResultFailedToApply},
		{"a team places a Namespace", func() (string, string, bool) { return team.mayPlaceKind(schema.GroupKind{Kind: "Namespace"}, true) }, ""},
		{"the platform places a ClusterRole", func() (string, string, bool) {
			return platform.mayPlaceKind(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, true)
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg, ok := tc.check()
			if ok != (tc.wantReason == "") || reason != tc.wantReason {
				t.Errorf("= %q %q %v, want reason %q", reason, msg, ok, tc.wantReason)
			}
		})
	}
}

func TestStamp(t *testing.T) {
	team := ownerOf(teamWork(""))
	ns := object("Namespace", "", "app", nil)
	team.stamp(ns, true)
	want := map[string]string{
		placementv1beta1.OwnerAnnotation: "2abc/app/web", placementv1beta1.CreatedByAnnotation: "2abc/app/web",
		placementv1beta1.NamespaceOwnerAnnotation: "2abc", placementv1beta1.NamespaceOwnerPathAnnotation: "root:teams:a",
	}
	for k, v := range want {
		if got := ns.GetAnnotations()[k]; got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if !team.manages(ns) || !team.createdBy(ns) {
		t.Errorf("the placement manages and created the namespace it stamped")
	}
	adopted := object("ConfigMap", "app", "cfg", map[string]string{"keep": "me"})
	team.stamp(adopted, false)
	if _, ok := adopted.GetAnnotations()[placementv1beta1.CreatedByAnnotation]; ok || !team.manages(adopted) || adopted.GetAnnotations()["keep"] != "me" {
		t.Errorf("an adopted object is managed, not created: %v", adopted.GetAnnotations())
	}
}

// A manifest cannot carry the syncer's bookkeeping onto a member: an adopted
// object that claimed to be created by the placement would later be deleted
// with it.
func TestStampDropsForgedOwnership(t *testing.T) {
	team := ownerOf(teamWork("legacy-*"))
	forged := object("ConfigMap", "legacy-app", "cfg", map[string]string{
		placementv1beta1.CreatedByAnnotation: team.identity, placementv1beta1.NamespaceOwnerAnnotation: "9xyz", "keep": "me"})
	team.stamp(forged, false)
	if team.createdBy(forged) {
		t.Errorf("an adopted object claims to be created by the placement: %v", forged.GetAnnotations())
	}
	if _, ok := forged.GetAnnotations()[placementv1beta1.NamespaceOwnerAnnotation]; ok || forged.GetAnnotations()["keep"] != "me" {
		t.Errorf("annotations = %v, want the manifest's own kept and the forged ownership gone", forged.GetAnnotations())
	}
}
