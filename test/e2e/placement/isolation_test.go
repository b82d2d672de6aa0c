package placement

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// The team rules hold on what reaches a member, after overrides and with
// envelopes open, each attack tried by a team identity with the default
// grant (no CRDs, no takeover, Pod Security baseline).
var _ = Describe("Tenant isolation on what reaches the member", func() {
	It("refuses an override that would turn a selected CRD into another kind, and places no CRD", func() {
		t := newTeam("kind-override")
		group := uniqueName("kinds") + ".example.com"
		crd := widgetCRD(group)
		t.create(crd)
		crdTerm := placementv1beta1.ResourceSelectorTerm{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.Name}
		crp := newCRP("crd", pickAll(), crdTerm)
		t.place(crp)
		Eventually(func(g Gomega) {
			st := t.getCRP(g, "crd").Status
			g.Expect(st.PerClusterPlacementStatuses).NotTo(BeEmpty())
			for _, pcs := range st.PerClusterPlacementStatuses {
				synced := condition(pcs.Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
				g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%s: %+v", pcs.ClusterName, synced)
				g.Expect(synced.Message).To(ContainSubstring("CustomResourceDefinition " + crd.Name + ": no ClusterGrant"))
			}
		}).Should(Succeed())

		By("adding /Kind, /APIVERSION or /metadata/Namespace with an override, in any letter case")
		for _, path := range []string{"/Kind", "/KIND", "/APIVERSION", "/Metadata/labels", "/metadata/Namespace"} {
			cro := &placementv1beta1.ClusterResourceOverride{
				ObjectMeta: metav1.ObjectMeta{Name: uniqueName("sneak")},
				Spec: placementv1beta1.ClusterResourceOverrideSpec{
					ClusterResourceSelectors: []placementv1beta1.ResourceSelectorTerm{crdTerm},
					Policy:                   &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{patchRule(onClusters(nil), jsonPatch("add", path, "ConfigMap"))}},
				},
			}
			err := t.c.Create(ctx(), cro)
			Expect(err).To(HaveOccurred(), "an override adding %s is refused", path)
			Expect(err.Error()).To(Or(ContainSubstring("in any letter case"), ContainSubstring("spelled exactly")), "path %s", path)
		}
		Consistently(func(g Gomega) { expectOnlyOn(g, crd) }, "3s").Should(Succeed())
	})

	It("refuses a reserved namespace, a ClusterRole and a case-variant key carried in an envelope, naming the envelope and entry", func() {
		t := newTeam("envelope-attack")
		ns := uniqueName("env")
		reserved := "kube-" + uniqueName("bar")
		privilegedNS := namespace(reserved)
		privilegedNS.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
		privilegedNS.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}
		t.create(namespace(ns))
		envelopes := map[string]struct {
			entry  string
			object placementv1beta1.EnvelopedObject
			want   string
		}{
			"env-ns": {"ns.yaml", enveloped(privilegedNS), "namespace " + reserved + " is reserved on member clusters"},
			"env-role": {"role.yaml", placementv1beta1.EnvelopedObject{RawExtension: rawJSON(
				`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"` + ns + `-admin"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`)},
				"ClusterRole " + ns + "-admin is cluster-scoped"},
			"env-variant": {"variant.json", placementv1beta1.EnvelopedObject{RawExtension: rawJSON(
				`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","Kind":"ConfigMap","metadata":{"name":"x"}}`)},
				`has the key "Kind", a variant of "kind"`},
		}
		for name, e := range envelopes {
			t.create(&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Data: map[string]placementv1beta1.EnvelopedObject{e.entry: e.object}})
		}
		t.place(newCRP("envelopes", pickFixed("member-2"), namespaceSelector(ns)))

		By("each envelope refused in turn, naming it and its entry; the refused one is then removed")
		for len(envelopes) > 0 {
			var refused string
			Eventually(func(g Gomega) {
				st := t.getCRP(g, "envelopes").Status
				g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(1))
				synced := condition(st.PerClusterPlacementStatuses[0].Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
				g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%+v", synced)
				refused = ""
				for name, e := range envelopes {
					if strings.Contains(synced.Message, fmt.Sprintf("ResourceEnvelope %s/%s, entry %q", ns, name, e.entry)) {
						g.Expect(synced.Message).To(ContainSubstring(e.want))
						refused = name
					}
				}
				g.Expect(refused).NotTo(BeEmpty(), "the message names a remaining envelope: %s", synced.Message)
				expectOnlyOn(g, namespace(reserved))
				expectOnlyOn(g, namespace(ns))
			}).Should(Succeed())
			Expect(t.c.Delete(ctx(), &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: refused}})).To(Succeed())
			delete(envelopes, refused)
		}
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "envelopes"), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "3")
		}).Should(Succeed())
		expectOnlyOn(Default, namespace(reserved))
	})

	It("adopts no cluster-scoped object through takeOverNamespaces, even with a pattern matching everything", func() {
		t := newTeam("takeover-star")
		group := uniqueName("adopt") + ".example.com"
		existing := widgetCRD(group)
		preexisting("member-3", existing)
		uids := uidsOn(Default, "member-3", existing)
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: uniqueName("star")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.path}, TakeOverNamespaces: []string{"*"}, AllowCustomResourceDefinitions: true,
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(ctx(), grant))).To(Succeed()) })

		t.create(widgetCRD(group))
		crdID := placementv1beta1.ResourceIdentifier{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: existing.Name}
		t.place(newCRP("adopt", pickFixed("member-3"), placementv1beta1.ResourceSelectorTerm{Group: crdID.Group, Version: crdID.Version, Kind: crdID.Kind, Name: crdID.Name}))
		Eventually(func(g Gomega) {
			expectFailed(g, t.getCRP(g, "adopt"), "member-3", placementv1beta1.ApplyResultNotTakenOver,
				"never cluster-scoped objects", crdID)
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			expectUntouched(g, "member-3", existing, uids[fmt.Sprintf("%T %s/%s", existing, "", existing.Name)])
		}, "3s").Should(Succeed())
	})

	It("holds workloads to the grant's Pod Security level on a shared member, and the namespace to it whatever its labels say", func() {
		t := newTeam("podsecurity")
		ns := uniqueName("psa")
		nsObj := namespace(ns)
		nsObj.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/warn": "privileged"}
		privileged := deployment(ns, "root", "nginx")
		privileged.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		hostNet := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hostnet"},
			Spec: appsv1.DaemonSetSpec{Selector: privileged.Spec.Selector, Template: *privileged.Spec.Template.DeepCopy()}}
		hostNet.Spec.Template.Spec.Containers[0].SecurityContext = nil
		hostNet.Spec.Template.Spec.HostNetwork = true
		hostPath := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hostpath"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				Volumes:    []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}}}}}
		critical := deployment(ns, "critical", "nginx")
		critical.Spec.Template.Spec.PriorityClassName = "system-cluster-critical"
		external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "external"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, ExternalIPs: []string{"203.0.113.9"}}}
		fine := deployment(ns, "fine", "nginx")
		t.create(nsObj, privileged, hostNet, hostPath, critical, external, fine)

		crp := newCRP("psa", pickFixed("member-1"), namespaceSelector(ns))
		t.place(crp)
		id := func(group, kind, name string) placementv1beta1.ResourceIdentifier {
			return placementv1beta1.ResourceIdentifier{Group: group, Version: "v1", Kind: kind, Namespace: ns, Name: name}
		}
		want := map[placementv1beta1.ResourceIdentifier]string{
			id("apps", "Deployment", "root"):     `violate Pod Security level "baseline"`,
			id("apps", "DaemonSet", "hostnet"):   "host namespaces",
			id("batch", "Job", "hostpath"):       "hostPath volumes",
			id("apps", "Deployment", "critical"): "priority class system-cluster-critical",
			id("", "Service", "external"):        "spec.externalIPs",
		}
		Eventually(func(g Gomega) {
			failed := failedOn(g, t.getCRP(g, "psa"), "member-1")
			got := map[placementv1beta1.ResourceIdentifier]string{}
			for _, f := range failed {
				g.Expect(f.Condition.Reason).To(Equal(placementv1beta1.ApplyResultFailedToApply), "%+v", f)
				got[f.ResourceIdentifier] = f.Condition.Message
			}
			g.Expect(got).To(HaveLen(len(want)), "%v", got)
			for id, msg := range want {
				g.Expect(got[id]).To(ContainSubstring(msg), "%v", id)
			}
			g.Expect(memberClient("member-1").Get(ctx(), client.ObjectKeyFromObject(fine), &appsv1.Deployment{})).To(Succeed())
		}).Should(Succeed())
		onMember := &corev1.Namespace{}
		Expect(memberClient("member-1").Get(ctx(), client.ObjectKey{Name: ns}, onMember)).To(Succeed())
		Expect(onMember.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "baseline"))
		Expect(onMember.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/warn", "privileged"), "warn is the team's own to choose")
		for _, o := range []client.Object{privileged, hostNet, hostPath, critical, external} {
			expectOnlyOn(Default, o)
		}

		By("a platform admin granting the team privileged on member-1")
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: uniqueName("privileged")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.path}, PodSecurity: "privileged",
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eastus", "env": "prod"}}},
		}
		Expect(fleetClient().Create(ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(ctx(), grant))).To(Succeed()) })
		Eventually(func(g Gomega) {
			g.Expect(failedOn(g, t.getCRP(g, "psa"), "member-1")).To(BeEmpty())
			got := &corev1.Namespace{}
			g.Expect(memberClient("member-1").Get(ctx(), client.ObjectKey{Name: ns}, got)).To(Succeed())
			g.Expect(got.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "privileged"))
			g.Expect(memberClient("member-1").Get(ctx(), client.ObjectKeyFromObject(privileged), &appsv1.Deployment{})).To(Succeed())
		}).Should(Succeed())
	})
})

var _ = Describe("A kind the workspace briefly stops serving", func() {
	It("keeps the placement's last snapshot and every placed object on the members until it is served again", func() {
		t := newTeam("unserved")
		group := uniqueName("unserved") + ".example.com"
		crd := widgetCRD(group)
		t.create(crd)
		ns := uniqueName("unserved")
		t.create(namespace(ns))
		Eventually(func() error { return t.c.Create(ctx(), widget(group, ns, "small", 1)) }).Should(Succeed())
		// The CRD goes with the custom resources: placed from root:fleet it
		// would be a platform's; here a grant lets the team place it.
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: uniqueName("unserved")},
			Spec:       tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.path}, AllowCustomResourceDefinitions: true},
		}
		Expect(fleetClient().Create(ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(ctx(), grant))).To(Succeed()) })
		crdTerm := placementv1beta1.ResourceSelectorTerm{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.Name}
		t.place(newCRP("widgets", pickFixed("member-1"), crdTerm, namespaceSelector(ns)))
		selected := []placementv1beta1.ResourceIdentifier{
			{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.Name},
			namespaceID(ns),
			{Group: group, Version: "v1", Kind: "Widget", Namespace: ns, Name: "small"},
		}
		Eventually(func(g Gomega) {
			expectAvailableUntrackable(g, t.getCRP(g, "widgets"), []string{"member-1"}, selected, "0")
		}).Should(Succeed())
		onMember := widget(group, ns, "small", 0)
		Expect(memberClient("member-1").Get(ctx(), client.ObjectKeyFromObject(onMember), onMember)).To(Succeed())

		By("the team's CRD no longer serving its only version (a schema change in progress)")
		setServed := func(served bool) {
			update(t.c, crd, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Served = served })
		}
		setServed(false)
		Eventually(func(g Gomega) {
			events := &corev1.EventList{}
			g.Expect(t.c.List(ctx(), events, client.MatchingFields{"involvedObject.name": "widgets"})).To(Succeed())
			g.Expect(events.Items).To(ContainElement(HaveField("Reason", "SelectedKindNotServed")))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(t.getCRP(g, "widgets").Status.SelectedResources).To(ContainElement(selected[2]), "the Widget stays selected")
			got := widget(group, ns, "small", 0)
			g.Expect(memberClient("member-1").Get(ctx(), client.ObjectKeyFromObject(got), got)).To(Succeed())
			g.Expect(got.GetUID()).To(Equal(onMember.GetUID()))
		}, "10s").Should(Succeed())

		By("serving it again: the placement carries on, nothing on the member was re-created")
		setServed(true)
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "widgets")
			expectAvailableUntrackable(g, crp, []string{"member-1"}, selected, crp.Status.ObservedResourceIndex)
			got := widget(group, ns, "small", 0)
			g.Expect(memberClient("member-1").Get(ctx(), client.ObjectKeyFromObject(got), got)).To(Succeed())
			g.Expect(got.GetUID()).To(Equal(onMember.GetUID()))
		}).Should(Succeed())
	})
})
