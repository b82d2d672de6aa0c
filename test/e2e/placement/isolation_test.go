package placement

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	tenancyv1alpha1kcp "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	kcpclient "github.com/kcp-dev/kcp/sdk/client/clientset/versioned"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// The team rules hold on what reaches a member, after overrides and with
// envelopes open, each attack tried by a team identity with the default
// grant (no CRDs, no takeover, Pod Security baseline).
var _ = Describe("Tenant isolation on what reaches the member", func() {
	It("refuses an override that would turn a selected CRD into another kind, and places no CRD", func() {
		t := newTeam("kind-override")
		group := framework.UniqueName("kinds") + ".example.com"
		crd := widgetCRD(group)
		t.Create(framework.Ctx(), crd)
		crdTerm := placementv1beta1.ResourceSelectorTerm{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: crd.Name}
		crp := newCRP("crd", pickAll(), crdTerm)
		t.place(crp)
		Eventually(func(g Gomega) {
			st := t.getCRP(g, "crd").Status
			g.Expect(st.PerClusterPlacementStatuses).NotTo(BeEmpty())
			for _, pcs := range st.PerClusterPlacementStatuses {
				synced := framework.Condition(pcs.Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
				g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%s: %+v", pcs.ClusterName, synced)
				g.Expect(synced.Message).To(ContainSubstring("CustomResourceDefinition " + crd.Name + ": no ClusterGrant"))
			}
		}).Should(Succeed())

		By("adding /Kind, /APIVERSION or /metadata/Namespace with an override, in any letter case")
		for _, path := range []string{"/Kind", "/KIND", "/APIVERSION", "/Metadata/labels", "/metadata/Namespace"} {
			cro := &placementv1beta1.ClusterResourceOverride{
				ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("sneak")},
				Spec: placementv1beta1.ClusterResourceOverrideSpec{
					ClusterResourceSelectors: []placementv1beta1.ResourceSelectorTerm{crdTerm},
					Policy:                   &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{patchRule(onClusters(nil), jsonPatch("add", path, "ConfigMap"))}},
				},
			}
			err := t.Client.Create(framework.Ctx(), cro)
			Expect(err).To(HaveOccurred(), "an override adding %s is refused", path)
			Expect(err.Error()).To(Or(ContainSubstring("in any letter case"), ContainSubstring("spelled exactly")), "path %s", path)
		}
		Consistently(func(g Gomega) { expectOnlyOn(g, crd) }, "3s").Should(Succeed())
	})

	It("refuses a reserved namespace, a ClusterRole and a case-variant key carried in an envelope, naming the envelope and entry", func() {
		t := newTeam("envelope-attack")
		ns := framework.UniqueName("env")
		reserved := "kube-" + framework.UniqueName("bar")
		privilegedNS := framework.Namespace(reserved)
		privilegedNS.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
		privilegedNS.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}
		t.Create(framework.Ctx(), framework.Namespace(ns))
		envelopes := map[string]struct {
			entry  string
			object placementv1beta1.EnvelopedObject
			want   string
		}{
			"env-ns": {"ns.yaml", enveloped(privilegedNS), "Namespace " + reserved + " is cluster-scoped: a ResourceEnvelope carries namespaced objects only"},
			"env-role": {"role.yaml", placementv1beta1.EnvelopedObject{RawExtension: rawJSON(
				`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"` + ns + `-admin"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`)},
				"ClusterRole " + ns + "-admin is cluster-scoped"},
			"env-variant": {"variant.json", placementv1beta1.EnvelopedObject{RawExtension: rawJSON(
				`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","Kind":"ConfigMap","metadata":{"name":"x"}}`)},
				`has the key "Kind", a variant of "kind"`},
		}
		for name, e := range envelopes {
			t.Create(framework.Ctx(), &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Data: map[string]placementv1beta1.EnvelopedObject{e.entry: e.object}})
		}
		t.place(newCRP("envelopes", pickFixed("member-2"), namespaceSelector(ns)))

		By("each envelope refused in turn, naming it and its entry; the refused one is then removed")
		for len(envelopes) > 0 {
			var refused string
			Eventually(func(g Gomega) {
				st := t.getCRP(g, "envelopes").Status
				g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(1))
				synced := framework.Condition(st.PerClusterPlacementStatuses[0].Conditions, string(placementv1beta1.PerClusterWorkSynchronizedConditionType))
				g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%+v", synced)
				refused = ""
				for name, e := range envelopes {
					if strings.Contains(synced.Message, fmt.Sprintf("ResourceEnvelope %s/%s, entry %q", ns, name, e.entry)) {
						g.Expect(synced.Message).To(ContainSubstring(e.want))
						refused = name
					}
				}
				g.Expect(refused).NotTo(BeEmpty(), "the message names a remaining envelope: %s", synced.Message)
				expectOnlyOn(g, framework.Namespace(reserved))
				expectOnlyOn(g, framework.Namespace(ns))
			}).Should(Succeed())
			Expect(t.Client.Delete(framework.Ctx(), &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: refused}})).To(Succeed())
			delete(envelopes, refused)
		}
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "envelopes"), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "3")
		}).Should(Succeed())
		expectOnlyOn(Default, framework.Namespace(reserved))
	})

	It("adopts no cluster-scoped object through takeOverNamespaces, even with a pattern matching everything", func() {
		t := newTeam("takeover-star")
		group := framework.UniqueName("adopt") + ".example.com"
		existing := widgetCRD(group)
		preexisting("member-3", existing)
		uids := uidsOn(Default, "member-3", existing)
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("star")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, TakeOverNamespaces: []string{"*"}, AllowCustomResourceDefinitions: true,
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })

		t.Create(framework.Ctx(), widgetCRD(group))
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
		ns := framework.UniqueName("psa")
		nsObj := framework.Namespace(ns)
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
		t.Create(framework.Ctx(), nsObj, privileged, hostNet, hostPath, critical, external, fine)

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
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKeyFromObject(fine), &appsv1.Deployment{})).To(Succeed())
		}).Should(Succeed())
		onMember := &corev1.Namespace{}
		Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Name: ns}, onMember)).To(Succeed())
		Expect(onMember.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "baseline"))
		Expect(onMember.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/warn", "privileged"), "warn is the team's own to choose")
		for _, o := range []client.Object{privileged, hostNet, hostPath, critical, external} {
			expectOnlyOn(Default, o)
		}

		By("a platform admin granting the team privileged on member-1")
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("privileged")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, PodSecurity: "privileged",
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eastus", "env": "prod"}}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })
		Eventually(func(g Gomega) {
			g.Expect(failedOn(g, t.getCRP(g, "psa"), "member-1")).To(BeEmpty())
			got := &corev1.Namespace{}
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKey{Name: ns}, got)).To(Succeed())
			g.Expect(got.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "privileged"))
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKeyFromObject(privileged), &appsv1.Deployment{})).To(Succeed())
		}).Should(Succeed())
	})
})

var _ = Describe("A kind the workspace briefly stops serving", func() {
	It("keeps the placement's last snapshot and every placed object on the members until it is served again", func() {
		t := newTeam("unserved")
		group := framework.UniqueName("unserved") + ".example.com"
		crd := widgetCRD(group)
		t.Create(framework.Ctx(), crd)
		ns := framework.UniqueName("unserved")
		t.Create(framework.Ctx(), framework.Namespace(ns))
		Eventually(func() error { return t.Client.Create(framework.Ctx(), widget(group, ns, "small", 1)) }).Should(Succeed())
		// The CRD goes with the custom resources: placed from root:fleet it
		// would be a platform's; here a grant lets the team place it.
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("unserved")},
			Spec:       tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, AllowCustomResourceDefinitions: true},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })
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
		Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKeyFromObject(onMember), onMember)).To(Succeed())

		By("the team's CRD no longer serving its only version (a schema change in progress)")
		setServed := func(served bool) {
			update(t.Client, crd, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Served = served })
		}
		setServed(false)
		Eventually(func(g Gomega) {
			events := &corev1.EventList{}
			g.Expect(t.Client.List(framework.Ctx(), events, client.MatchingFields{"involvedObject.name": "widgets"})).To(Succeed())
			g.Expect(events.Items).To(ContainElement(HaveField("Reason", "SelectedKindNotServed")))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(t.getCRP(g, "widgets").Status.SelectedResources).To(ContainElement(selected[2]), "the Widget stays selected")
			got := widget(group, ns, "small", 0)
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKeyFromObject(got), got)).To(Succeed())
			g.Expect(got.GetUID()).To(Equal(onMember.GetUID()))
		}, "10s").Should(Succeed())

		By("serving it again: the placement carries on, nothing on the member was re-created")
		setServed(true)
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "widgets")
			expectAvailableUntrackable(g, crp, []string{"member-1"}, selected, crp.Status.ObservedResourceIndex)
			got := widget(group, ns, "small", 0)
			g.Expect(memberClient("member-1").Get(framework.Ctx(), client.ObjectKeyFromObject(got), got)).To(Succeed())
			g.Expect(got.GetUID()).To(Equal(onMember.GetUID()))
		}).Should(Succeed())
	})
})

var _ = Describe("A team's child workspaces", func() {
	It("are refused unless a grant allows them; an allowed child is its team on the members", func() {
		t := newTeam("nest")
		kcp, err := kcpclient.NewForConfig(t.Config)
		Expect(err).NotTo(HaveOccurred())
		sub := &tenancyv1alpha1kcp.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "sub"}}
		_, err = kcp.TenancyV1alpha1().Workspaces().Create(framework.Ctx(), sub, metav1.CreateOptions{})
		Expect(err).To(HaveOccurred(), "the default grant covers no child workspace")
		Expect(err.Error()).To(ContainSubstring("may have child workspaces only where a ClusterGrant naming it sets spec.childWorkspaces: true"))

		By("a platform admin letting the team have child workspaces")
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("nest")},
			Spec:       tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path}, ChildWorkspaces: true},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })
		Eventually(func() error {
			_, err := kcp.TenancyV1alpha1().Workspaces().Create(framework.Ctx(), sub, metav1.CreateOptions{})
			return err
		}).Should(Succeed())
		Expect(kcp.TenancyV1alpha1().Workspaces().Delete(framework.Ctx(), sub.Name, metav1.DeleteOptions{})).To(Succeed())
		// kcp binds a new workspace's APIs as the user who created it, and
		// a service account counts only in its own workspace: a child a
		// team's service account creates stays Initializing. Teams create
		// children as users; the child that places here is one a hub admin
		// creates in the team's workspace.
		admin, err := kcpclient.NewForConfig(hub.Config(t.Path))
		Expect(err).NotTo(HaveOccurred())
		_, err = admin.TenancyV1alpha1().Workspaces().Create(framework.Ctx(), &tenancyv1alpha1kcp.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "placing"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		subPath := t.Path + ":placing"
		Eventually(func(g Gomega) {
			got, err := kcp.TenancyV1alpha1().Workspaces().Get(framework.Ctx(), "placing", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Status.Phase).To(Equal(corev1alpha1.LogicalClusterPhaseReady), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(hub.WaitBindingsBound(framework.Ctx(), subPath, "placement.kubernetes-fleet.io", "kubernetes")).To(Succeed())
		cfg, err := hub.TeamAdmin(framework.Ctx(), subPath, "sub-admin")
		Expect(err).NotTo(HaveOccurred())
		child, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())

		By("the team placing a namespace, and its child placing into it: one owner on the member")
		ns := framework.UniqueName("nest")
		t.Create(framework.Ctx(), framework.Namespace(ns))
		t.place(newCRP("ns", pickFixed("member-2"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "ns"), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "0")
		}).Should(Succeed())
		Expect(child.Create(framework.Ctx(), framework.Namespace(ns))).To(Succeed())
		Expect(child.Create(framework.Ctx(), framework.ConfigMap(ns, "from-child", map[string]string{"a": "b"}))).To(Succeed())
		rp := &placementv1beta1.ResourcePlacement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"},
			Spec: placementv1beta1.PlacementSpec{ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "ConfigMap", Name: "from-child"}},
				Policy: pickFixed("member-2")}}
		Expect(child.Create(framework.Ctx(), rp)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(child.Delete(framework.Ctx(), rp))).To(Succeed())
			Eventually(func() bool {
				return apierrors.IsNotFound(child.Get(framework.Ctx(), client.ObjectKeyFromObject(rp), rp))
			}).Should(BeTrue())
		})
		Eventually(func(g Gomega) {
			g.Expect(child.Get(framework.Ctx(), client.ObjectKeyFromObject(rp), rp)).To(Succeed())
			expectAvailable(g, rp, []string{"member-2"}, []placementv1beta1.ResourceIdentifier{configMapID(ns, "from-child")}, "0")
			g.Expect(configMapOn(g, "member-2", ns, "from-child").Data).To(HaveKeyWithValue("a", "b"))
		}).Should(Succeed())
	})
})

var _ = Describe("A team's limits on the hub", func() {
	It("refuse what would take the team over them, naming the limit and who raises it; the team sees its usage and cannot change it", func() {
		t := newTeam("limits")
		By("a platform admin limiting the team to 4Mi of storage, 2 placements and 10 snapshots kept")
		storage := resource.MustParse("4Mi")
		grant := &tenancyv1alpha1.ClusterGrant{
			ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("limits")},
			Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{t.Path},
				Limits: &tenancyv1alpha1.TeamLimits{Storage: &storage, Placements: ptr.To[int32](2), SnapshotsKept: ptr.To[int32](10)}},
		}
		Expect(fleetClient().Create(framework.Ctx(), grant)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(fleetClient().Delete(framework.Ctx(), grant))).To(Succeed()) })

		By("the team writing Secrets of 600 KB of random data until one is refused")
		ns := framework.UniqueName("limits")
		t.Create(framework.Ctx(), framework.Namespace(ns))
		var refused error
		written := 0
		Eventually(func(g Gomega) {
			// The hub reads the grant from its cache: wait until it holds.
			g.Expect(t.Client.Create(framework.Ctx(), secret600KB(ns, "probe"))).To(Succeed())
			g.Expect(t.Client.Delete(framework.Ctx(), secret600KB(ns, "probe"))).To(Succeed())
		}).Should(Succeed())
		for i := 0; i < 40 && refused == nil; i++ {
			if refused = t.Client.Create(framework.Ctx(), secret600KB(ns, fmt.Sprintf("blob-%d", i))); refused == nil {
				written++
			}
		}
		Expect(refused).To(HaveOccurred(), "40 Secrets of 600 KB are over 4Mi")
		Expect(apierrors.IsForbidden(refused)).To(BeTrue(), "%v", refused)
		Expect(refused.Error()).To(ContainSubstring("team " + t.Path + " would go over its limit of 4Mi of storage on the hub"))
		Expect(refused.Error()).To(ContainSubstring("ask a platform admin to raise spec.limits.storage of ClusterGrant " + grant.Name + " in root:fleet"))
		Expect(written).To(BeNumerically("<=", 7))

		By("deleting Secrets frees room again")
		for i := 0; i < written; i++ {
			Expect(t.Client.Delete(framework.Ctx(), secret600KB(ns, fmt.Sprintf("blob-%d", i)))).To(Succeed())
		}
		Eventually(func() error { return t.Client.Create(framework.Ctx(), secret600KB(ns, "after")) }).Should(Succeed())

		By("a third placement and a placement keeping 11 snapshots are refused")
		for _, name := range []string{"one", "two"} {
			t.place(newCRP(name, pickFixed("member-3"), namespaceSelector(ns)))
		}
		Eventually(func(g Gomega) {
			err := t.Client.Create(framework.Ctx(), newCRP("three", pickFixed("member-3"), namespaceSelector(ns)))
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("would go over its limit of 2 placements (it has 2, this adds 1)"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			crp := &placementv1beta1.ClusterResourcePlacement{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: "one"}, crp)).To(Succeed())
			crp.Spec.RevisionHistoryLimit = ptr.To[int32](11)
			err := t.Client.Update(framework.Ctx(), crp)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("spec.revisionHistoryLimit 11 is over team " + t.Path + "'s limit of 10 snapshots kept per placement"))
		}).Should(Succeed())

		By("the team reading its usage, and not changing it")
		kubeconfig := t.kubeconfig()
		Eventually(func(g Gomega) {
			s := kubectlFleet(kubeconfig, "team", "usage")
			g.Eventually(s, time.Minute).Should(gexec.Exit(0), "%s", s.Err.Contents())
			out := string(s.Out.Contents())
			g.Expect(out).To(ContainSubstring("team " + t.Path + ", limits from ClusterGrant " + grant.Name))
			g.Expect(out).To(MatchRegexp(`placements\s+2\s+2\s+100%`))
			g.Expect(out).To(MatchRegexp(`storage\s+\S+\s+4Mi`))
		}, "45s").Should(Succeed())
		Eventually(func(g Gomega) {
			lc := &corev1alpha1.LogicalCluster{}
			g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKey{Name: corev1alpha1.LogicalClusterName}, lc)).To(Succeed())
			lc.Annotations[tenancyv1alpha1.UsageAnnotation] = `{"used":{}}`
			err := t.Client.Update(framework.Ctx(), lc)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("is written by the hub alone"))
		}).Should(Succeed())
	})
})

// secret600KB is a Secret of 600 KB that does not compress.
func secret600KB(ns, name string) *corev1.Secret {
	data := make([]byte, 600<<10)
	_, _ = rand.Read(data)
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"blob": data}}
}
