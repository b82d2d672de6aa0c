package members

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// teamWork is a Work as the hub writes it for a team workspace whose grants
// allow no CRDs, takeover anywhere ("*") and the default Pod Security level.
func teamWork(memberName, name string, objs ...any) *placementv1beta1.Work {
	w := newWork(memberName, name, objs...)
	w.Labels = map[string]string{placementv1beta1.WorkspaceLabel: "forged", placementv1beta1.PlacementTrackingLabel: name}
	w.Annotations = map[string]string{
		placementv1beta1.WorkspacePathAnnotation:      "root:teams:forged",
		placementv1beta1.TenantAnnotation:             "true",
		placementv1beta1.TakeOverNamespacesAnnotation: "*",
	}
	return w
}

func crd(group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", Plural: "gadgets", Singular: "gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// The syncer holds a team's Work to the team rules again before it writes:
// a Work the hub should never have written (a hub bug, forged here with the
// hub controllers' own privilege) is refused object by object, and nothing
// of it reaches the member.
var _ = Describe("A team's Work that breaks the team rules", func() {
	It("is refused by the syncer, object by object, and changes nothing on the member", func() {
		m := members.Named("member-3")
		fc, mc := fleetClient(), framework.MemberClient(m, scheme)
		suffix := framework.RandomSuffix()
		ns := "team-" + suffix
		existing := crd("existing-" + suffix + ".example.com")
		Expect(mc.Create(framework.Ctx(), existing)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(mc.Delete(framework.Ctx(), existing))).To(Succeed()) })
		Expect(mc.Get(framework.Ctx(), client.ObjectKeyFromObject(existing), existing)).To(Succeed())

		reserved := framework.Namespace("kube-bar-" + suffix)
		reserved.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}
		own := framework.Namespace(ns)
		own.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}
		privileged := deployment(ns, "root", 1, "10m")
		privileged.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		hostNet := deployment(ns, "hostnet", 1, "10m")
		hostNet.Spec.Template.Spec.HostNetwork = true
		hostPath := deployment(ns, "hostpath", 1, "10m")
		hostPath.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		critical := deployment(ns, "critical", 1, "10m")
		critical.Spec.Template.Spec.PriorityClassName = "system-node-critical"
		external := service(ns, "external", 80)
		external.Spec.ExternalIPs = []string{"203.0.113.7"}
		role := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: metav1.ObjectMeta{Name: "forged-" + suffix}}
		caseVariant := runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"apiVersion":"v1","kind":"ConfigMap","Kind":"Secret","metadata":{"name":"variant","namespace":%q}}`, ns))}
		envelopedRole := role.DeepCopy()
		envelopedRole.Name = "in-a-namespace-" + suffix
		envelopedRole.Namespace = ns // as a ResourceEnvelope entry carries it

		work := teamWork(m.Name, "forged-"+suffix, own, reserved, crd("new-"+suffix+".example.com"), crd("existing-"+suffix+".example.com"), role, envelopedRole,
			privileged, hostNet, hostPath, critical, external, framework.ConfigMap(ns, "fine", map[string]string{"ok": "yes"}))
		work.Spec.Workload.Manifests = append(work.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: caseVariant})
		// With CRDs allowed, the takeover pattern "*" still adopts no
		// cluster-scoped object.
		takeOver := teamWork(m.Name, "forged-takeover-"+suffix, crd("existing-"+suffix+".example.com"))
		takeOver.Annotations[placementv1beta1.AllowCustomResourceDefinitionsAnnotation] = "true"
		for _, w := range []*placementv1beta1.Work{work, takeOver} {
			Expect(fc.Create(framework.Ctx(), w)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(fc.Delete(framework.Ctx(), w))).To(Succeed()) })
		}

		want := map[int]string{ // ordinal: reason and part of the message
			1:  "namespace kube-bar-" + suffix + " is reserved",
			2:  "no ClusterGrant covering this member cluster lets the workspace place CRDs",
			3:  "no ClusterGrant covering this member cluster lets the workspace place CRDs",
			4:  "ClusterRole forged-" + suffix + " is cluster-scoped",
			5:  "ClusterRole in-a-namespace-" + suffix + " is cluster-scoped",
			6:  "privileged",
			7:  "host namespaces",
			8:  "hostPath volumes",
			9:  "priority class system-node-critical",
			10: "spec.externalIPs",
			12: `has the key "Kind", a variant of "kind"`,
		}
		Eventually(func(g Gomega) {
			w := &placementv1beta1.Work{}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(work), w)).To(Succeed())
			g.Expect(w.Status.ManifestConditions).To(HaveLen(13))
			for _, mc := range w.Status.ManifestConditions {
				applied := framework.Condition(mc.Conditions, placementv1beta1.WorkConditionTypeApplied)
				msg, refused := want[mc.Identifier.Ordinal]
				if !refused {
					g.Expect(applied.Status).To(Equal(metav1.ConditionTrue), "manifest %d: %+v", mc.Identifier.Ordinal, applied)
					continue
				}
				g.Expect(applied.Status).To(Equal(metav1.ConditionFalse), "manifest %d: %+v", mc.Identifier.Ordinal, applied)
				g.Expect(applied.Message).To(ContainSubstring(msg), "manifest %d", mc.Identifier.Ordinal)
			}
			g.Expect(fc.Get(framework.Ctx(), client.ObjectKeyFromObject(takeOver), w)).To(Succeed())
			g.Expect(w.Status.ManifestConditions).To(HaveLen(1))
			applied := framework.Condition(w.Status.ManifestConditions[0].Conditions, placementv1beta1.WorkConditionTypeApplied)
			g.Expect(applied.Reason).To(Equal(placementv1beta1.ApplyResultNotTakenOver), "%+v", applied)
		}, timeout, interval).Should(Succeed())

		By("the team's namespace is held to baseline, whatever its labels say")
		got := &corev1.Namespace{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKey{Name: ns}, got)).To(Succeed())
		Expect(got.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "baseline"))
		Expect(got.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce-version", "latest"))

		By("nothing refused exists on the member, and the CRD that was there is untouched")
		for _, o := range []client.Object{reserved, role, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: envelopedRole.Name}}, crd("new-" + suffix + ".example.com"),
			privileged, hostNet, hostPath, critical, external, framework.ConfigMap(ns, "variant", nil)} {
			err := mc.Get(framework.Ctx(), client.ObjectKeyFromObject(o), o)
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s: %v", o, o.GetName(), err)
		}
		after := &apiextensionsv1.CustomResourceDefinition{}
		Expect(mc.Get(framework.Ctx(), client.ObjectKeyFromObject(existing), after)).To(Succeed())
		Expect(after.UID).To(Equal(existing.UID))
		Expect(after.Annotations).NotTo(HaveKey(placementv1beta1.OwnerAnnotation))
		Expect(after.OwnerReferences).To(BeEmpty())
	})
})
