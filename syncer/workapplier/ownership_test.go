package workapplier

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
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
	if team.identity != "2abc/app/web" || !team.tenant() || team.path != "root:teams:a" || len(team.policy.TakeOverNamespaces) != 2 ||
		team.policy.PodSecurity != teampolicy.LevelBaseline || team.policy.CustomResourceDefinitions {
		t.Errorf("team Work owner = %+v", team)
	}
	crp := teamWork("")
	crp.Labels[placementv1beta1.ParentNamespaceLabel] = ""
	if o := ownerOf(crp); o.identity != "2abc/web" || o.policy.TakeOverNamespaces != nil {
		t.Errorf("CRP Work owner = %+v", o)
	}
	if team.manager == ownerOf(crp).manager || len(team.manager) > 128 {
		t.Errorf("field managers %q and %q must differ per placement and be short", team.manager, ownerOf(crp).manager)
	}
	byHand := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "fleet-member-m1"}}
	if o := ownerOf(byHand); o.identity != "work:fleet-member-m1/w" || o.tenant() {
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
	everything := ownerOf(teamWork("*"))
	childWork := teamWork("")
	childWork.Labels[placementv1beta1.WorkspaceLabel] = "5kid"
	childWork.Annotations[placementv1beta1.TeamAnnotation] = "2abc"
	childWork.Annotations[placementv1beta1.TeamPathAnnotation] = "root:teams:a"
	child := ownerOf(childWork)
	crdWork := teamWork("")
	crdWork.Annotations[placementv1beta1.AllowCustomResourceDefinitionsAnnotation] = "true"
	withCRDs := ownerOf(crdWork)
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
		{"a child workspace places into its team's namespace", func() (string, string, bool) { return child.mayUseNamespace("ns", owned("2abc")) }, ""},
		{"a child workspace places into no other namespace", func() (string, string, bool) { return child.mayUseNamespace("ns", owned("5kid")) },
			placementv1beta1.ApplyResultFailedToTakeOver},
		{"adopting an object outside the takeover namespaces", func() (string, string, bool) {
			return team.mayAdopt(object("ConfigMap", "platform-system", "cfg", nil), false)
		}, placementv1beta1.ApplyResultNotTakenOver},
		{"adopting a namespace no placement created", func() (string, string, bool) {
			return team.mayAdopt(object("Namespace", "", "platform-system", nil), true)
		}, placementv1beta1.ApplyResultNotTakenOver},
		{"adopting inside a takeover namespace", func() (string, string, bool) {
			return team.mayAdopt(object("ConfigMap", "legacy-app", "cfg", nil), false)
		}, ""},
		{"adopting a namespace a takeover pattern matches", func() (string, string, bool) {
			return team.mayAdopt(object("Namespace", "", "legacy-app", nil), true)
		}, ""},
		{"a pattern matching everything adopts no cluster-scoped object", func() (string, string, bool) {
			return everything.mayAdopt(crd("widgets.example.com"), true)
		}, placementv1beta1.ApplyResultNotTakenOver},
		{"a pattern matching everything adopts no reserved namespace", func() (string, string, bool) {
			return everything.mayAdopt(object("Namespace", "", "kube-system", nil), true)
		}, placementv1beta1.ApplyResultNotTakenOver},
		{"the platform adopts as its apply strategy says", func() (string, string, bool) {
			return platform.mayAdopt(object("ConfigMap", "platform-system", "cfg", nil), false)
		}, ""},
		{"a team places a ClusterRole", func() (string, string, bool) {
			return team.mayPlace(clusterRole(), true)
		}, placementv1beta1.ApplyResultFailedToApply},
		{"a team places a ClusterRole in a namespace the hub gave it (an envelope's)", func() (string, string, bool) {
			cr := clusterRole()
			cr.SetNamespace("app")
			return team.mayPlace(cr, true)
		}, placementv1beta1.ApplyResultFailedToApply},
		{"a team places a Namespace", func() (string, string, bool) { return team.mayPlace(object("Namespace", "", "app", nil), true) }, ""},
		{"a team places a reserved Namespace", func() (string, string, bool) { return team.mayPlace(object("Namespace", "", "kube-bar", nil), true) },
			placementv1beta1.ApplyResultFailedToApply},
		{"a team places into a reserved namespace", func() (string, string, bool) {
			return team.mayPlace(object("ConfigMap", "kube-system", "c", nil), false)
		}, placementv1beta1.ApplyResultFailedToApply},
		{"a team places a CRD its grants do not allow", func() (string, string, bool) { return team.mayPlace(crd("widgets.example.com"), true) },
			placementv1beta1.ApplyResultFailedToApply},
		{"a team places a CRD its grants allow", func() (string, string, bool) { return withCRDs.mayPlace(crd("widgets.example.com"), true) }, ""},
		{"a team places a privileged pod template", func() (string, string, bool) { return team.mayPlace(privilegedDeployment(), false) },
			placementv1beta1.ApplyResultFailedToApply},
		{"the platform places a ClusterRole", func() (string, string, bool) {
			return platform.mayPlace(clusterRole(), true)
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

func crd(name string) *unstructured.Unstructured {
	o := object("CustomResourceDefinition", "", name, nil)
	o.SetAPIVersion("apiextensions.k8s.io/v1")
	return o
}

func clusterRole() *unstructured.Unstructured {
	o := object("ClusterRole", "", "reader", nil)
	o.SetAPIVersion("rbac.authorization.k8s.io/v1")
	return o
}

func privilegedDeployment() *unstructured.Unstructured {
	o := object("Deployment", "app", "web", nil)
	o.SetAPIVersion("apps/v1")
	o.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "image": "i", "securityContext": map[string]any{"privileged": true}}}}}}
	return o
}

// Conflict messages name a placement of the same workspace, and never
// another team's workspace or placement.
func TestOtherPlacement(t *testing.T) {
	team := ownerOf(teamWork(""))
	if got := team.otherPlacement("2abc/app/other"); got != "placement app/other of this workspace" {
		t.Errorf("same workspace: %q", got)
	}
	if got := team.otherPlacement("9xyz/secret-project"); got != "a placement of another workspace" {
		t.Errorf("another workspace: %q", got)
	}
	_, msg, _ := team.mayUseNamespace("ns", object("Namespace", "", "ns", map[string]string{
		placementv1beta1.NamespaceOwnerAnnotation: "9xyz", placementv1beta1.NamespaceOwnerPathAnnotation: "root:teams:secret"}))
	if strings.Contains(msg, "9xyz") || strings.Contains(msg, "secret") || !strings.Contains(msg, "another workspace") {
		t.Errorf("namespace conflict message discloses its owner: %q", msg)
	}
}

// A team's namespace gets its grants' Pod Security level; its own labels
// may tighten it, never loosen it, and the manifest's hash follows.
func TestLabelNamespace(t *testing.T) {
	w := teamWork("")
	w.Annotations[placementv1beta1.PodSecurityAnnotation] = "baseline"
	team := ownerOf(w)
	for own, want := range map[string]string{"": "baseline", "privileged": "baseline", "restricted": "restricted", "bogus": "baseline"} {
		ns := object("Namespace", "", "app", nil)
		if own != "" {
			ns.SetLabels(map[string]string{"pod-security.kubernetes.io/enforce": own, "pod-security.kubernetes.io/enforce-version": "v1.0"})
		}
		m := &manifest{obj: ns, hash: "h"}
		if err := team.labelNamespace(m); err != nil {
			t.Fatal(err)
		}
		l := m.obj.GetLabels()
		if l["pod-security.kubernetes.io/enforce"] != want || l["pod-security.kubernetes.io/enforce-version"] != "latest" ||
			l["pod-security.kubernetes.io/warn"] != want || m.hash == "h" {
			t.Errorf("own level %q: labels %v, hash %q; want enforce %s", own, l, m.hash, want)
		}
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
	childWork := teamWork("")
	childWork.Labels[placementv1beta1.WorkspaceLabel] = "5kid"
	childWork.Annotations[placementv1beta1.TeamAnnotation] = "2abc"
	childWork.Annotations[placementv1beta1.TeamPathAnnotation] = "root:teams:a"
	childNS := object("Namespace", "", "kid", nil)
	ownerOf(childWork).stamp(childNS, true)
	if got := childNS.GetAnnotations(); got[placementv1beta1.NamespaceOwnerAnnotation] != "2abc" || got[placementv1beta1.OwnerAnnotation] != "5kid/app/web" {
		t.Errorf("a child workspace's namespace is its team's, its objects its placement's: %v", got)
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
