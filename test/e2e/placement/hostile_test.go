package placement

import (
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// hostileInput is bad input the hub cannot refuse at admission (the schema
// cases are in the hub suite's admission table).
type hostileInput struct {
	// objects are what the team creates in namespace ns first.
	objects func(ns string) []client.Object
	// placement is the placement under test (named name) over ns.
	placement func(ns, name string) placementv1beta1.PlacementObj
}

// report is the condition a hostile input must end with. Inputs reported
// per cluster are placed by a ClusterResourcePlacement of their namespace:
// a ResourcePlacement would wait for the namespace on the member.
type report struct {
	// condition is the condition type without the placement kind prefix;
	// perCluster looks for it on the one cluster the placement picks.
	condition  string
	perCluster bool
	reason     string
	// message are substrings of the condition's message: what is wrong
	// and how to fix it.
	message func(ns string) []string
}

func rpOf(ns, name string, selectors ...placementv1beta1.ResourceSelectorTerm) placementv1beta1.PlacementObj {
	return &placementv1beta1.ResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       placementv1beta1.PlacementSpec{ResourceSelectors: selectors, Policy: pickFixed("member-2")},
	}
}

func crpOf(_, name string, selectors ...placementv1beta1.ResourceSelectorTerm) placementv1beta1.PlacementObj {
	return newCRP(name, pickFixed("member-2"), selectors...)
}

func selectKind(group, version, kind, name string) placementv1beta1.ResourceSelectorTerm {
	return placementv1beta1.ResourceSelectorTerm{Group: group, Version: version, Kind: kind, Name: name}
}

func invalidSelectors(message func(ns string) []string) report {
	return report{condition: "Scheduled", reason: placementv1beta1.InvalidResourceSelectorsReason, message: message}
}

// workNotSynced is a Work the hub could not render for the cluster.
func workNotSynced(message func(ns string) []string) report {
	return report{condition: "WorkSynchronized", perCluster: true, reason: placementv1beta1.SyncWorkFailedReason, message: message}
}

func rawJSON(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

func messages(m ...string) func(string) []string {
	return func(string) []string { return m }
}

// blobCRD is a namespaced custom resource of any content, for objects as
// large as the hub stores.
func blobCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "blobs.hostile.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "hostile.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Blob", Plural: "blobs", Singular: "blob", ListKind: "BlobList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
}

func blob(ns, name string, bytes int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": strings.Repeat("x", bytes)}}
	u.SetAPIVersion("hostile.example.com/v1")
	u.SetKind("Blob")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

var hostileCases = []TableEntry{
	Entry("a kind the workspace does not serve", invalidSelectors(messages("the workspace does not serve hostile.example.com/v1, Kind=Widget; check group, version and kind")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, selectKind("hostile.example.com", "v1", "Widget", "w"))
		}}),
	Entry("a version the workspace does not serve", invalidSelectors(messages("the workspace does not serve apps/v2, Kind=Deployment")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return rpOf(ns, name, selectKind("apps", "v2", "Deployment", "web"))
		}}),
	Entry("a cluster-scoped kind in a ResourcePlacement", invalidSelectors(messages("ClusterRole is cluster-scoped: a ResourcePlacement selects objects in its own namespace; use a ClusterResourcePlacement")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return rpOf(ns, name, selectKind("rbac.authorization.k8s.io", "v1", "ClusterRole", "reader"))
		}}),
	Entry("a namespaced kind in a ClusterResourcePlacement without its namespace", invalidSelectors(messages("ConfigMap is namespaced", "select its namespace")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, selectKind("", "v1", "ConfigMap", "settings"))
		}}),
	Entry("a ClusterRole from a team workspace", invalidSelectors(messages("ClusterRole reader is cluster-scoped: a team workspace places only Namespaces")), hostileInput{
		objects: func(string) []client.Object {
			return []client.Object{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}}
		},
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, selectKind("rbac.authorization.k8s.io", "v1", "ClusterRole", "reader"))
		}}),
	Entry("Pods, which belong to the member's controllers", invalidSelectors(messages("Pod cannot be placed")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return rpOf(ns, name, selectKind("", "v1", "Pod", ""))
		}}),
	Entry("placements, which the fleet does not place", invalidSelectors(messages("ResourcePlacement cannot be placed")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return rpOf(ns, name, selectKind("placement.kubernetes-fleet.io", "v1beta1", "ResourcePlacement", ""))
		}}),
	Entry("a label selector without values for In", invalidSelectors(messages("labelSelector of ConfigMap", "values set can't be empty")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			t := selectKind("", "v1", "ConfigMap", "")
			t.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}
			return rpOf(ns, name, t)
		}}),
	Entry("a label selector with an invalid key", invalidSelectors(messages("labelSelector of ConfigMap", "bad key!")), hostileInput{
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			t := selectKind("", "v1", "ConfigMap", "")
			t.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
			return rpOf(ns, name, t)
		}}),
	Entry("a ResourcePlacement in a reserved namespace", invalidSelectors(func(ns string) []string {
		return []string{fmt.Sprintf("namespace fleet-%s is reserved on member clusters", ns), "put the placement and its objects in a namespace of your own"}
	}), hostileInput{
		objects: func(ns string) []client.Object { return []client.Object{framework.Namespace("fleet-" + ns)} },
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return rpOf("fleet-"+ns, name, selectKind("", "v1", "ConfigMap", ""))
		}}),
	Entry("an object too large for the hub to snapshot (1.5 MiB less 600 bytes)", invalidSelectors(func(ns string) []string {
		return []string{fmt.Sprintf("Blob %s/edge is ", ns), "KiB, too large to place", "make it smaller or leave it out of the resource selectors"}
	}), hostileInput{
		objects: func(ns string) []client.Object { return []client.Object{blob(ns, "edge", 1536*1024-600)} },
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return rpOf(ns, name, selectKind("hostile.example.com", "v1", "Blob", "edge"))
		}}),
	Entry("a JSON patch removing a path the object does not have", report{condition: "Overridden", perCluster: true, reason: placementv1beta1.OverriddenFailedReason,
		message: func(ns string) []string {
			return []string{fmt.Sprintf("ResourceOverride %s/strip", ns), "overrideRules[0].jsonPatchOverrides[0] (remove /data/missing)"}
		}}, hostileInput{
		objects: func(ns string) []client.Object {
			return []client.Object{resourceOverride(ns, "strip", []placementv1beta1.ResourceSelector{selectConfigMap("settings")},
				patchRule(onClusters(nil), jsonPatch("remove", "/data/missing", nil)))}
		},
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, namespaceSelector(ns))
		}}),
	Entry("an envelope carrying an object of another namespace", workNotSynced(func(ns string) []string {
		return []string{fmt.Sprintf(`ResourceEnvelope %s/wrong, entry "cm.yaml": ConfigMap x is in namespace elsewhere`, ns)}
	}), hostileInput{
		objects: func(ns string) []client.Object {
			return []client.Object{&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wrong"},
				Data: map[string]placementv1beta1.EnvelopedObject{"cm.yaml": enveloped(framework.ConfigMap("elsewhere", "x", nil))}}}
		},
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, namespaceSelector(ns))
		}}),
	Entry("an envelope entry without a kind", workNotSynced(func(ns string) []string {
		return []string{fmt.Sprintf(`ResourceEnvelope %s/kindless, entry "cm.yaml": apiVersion, kind and metadata.name are required`, ns)}
	}), hostileInput{
		objects: func(ns string) []client.Object {
			return []client.Object{&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kindless"},
				Data: map[string]placementv1beta1.EnvelopedObject{"cm.yaml": {RawExtension: rawJSON(`{"apiVersion":"v1","metadata":{"name":"x"}}`)}}}}
		},
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, namespaceSelector(ns))
		}}),
	Entry("an envelope carrying an envelope", workNotSynced(func(ns string) []string {
		return []string{fmt.Sprintf(`ResourceEnvelope %s/nested, entry "env.yaml": envelopes cannot carry envelopes`, ns)}
	}), hostileInput{
		objects: func(ns string) []client.Object {
			return []client.Object{&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nested"},
				Data: map[string]placementv1beta1.EnvelopedObject{"env.yaml": {RawExtension: rawJSON(
					`{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"inner"},"data":{}}`)}}}}
		},
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, namespaceSelector(ns))
		}}),
	Entry("an object selected directly and carried in an envelope (two manifests of one object)", workNotSynced(func(ns string) []string {
		return []string{fmt.Sprintf("ConfigMap %s/settings is placed twice, by the resource selectors and by ResourceEnvelope %s/again", ns, ns), "remove one of them"}
	}), hostileInput{
		objects: func(ns string) []client.Object {
			return []client.Object{&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "again"},
				Data: map[string]placementv1beta1.EnvelopedObject{"cm.yaml": enveloped(framework.ConfigMap(ns, "settings", map[string]string{"from": "envelope"}))}}}
		},
		placement: func(ns, name string) placementv1beta1.PlacementObj {
			return crpOf(ns, name, namespaceSelector(ns))
		}}),
}

// The canary is another team's placement, which must keep working through
// every hostile case.
var _ = Describe("Hostile input", Ordered, func() {
	var t, canaryTeam *team
	var canaryNS string
	canaryChanges := 0

	// expectCanaryServes changes the canary's ConfigMap and waits until
	// every member has the change: the hub and the syncers still work.
	expectCanaryServes := func() {
		canaryChanges++
		want := fmt.Sprint(canaryChanges)
		update(canaryTeam.Client, framework.ConfigMap(canaryNS, "canary", nil), func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"change": want} })
		Eventually(func(g Gomega) {
			for _, m := range allMembers() {
				g.Expect(configMapOn(g, m, canaryNS, "canary").Data).To(HaveKeyWithValue("change", want), "on %s", m)
			}
		}).Should(Succeed())
	}

	BeforeAll(func() {
		canaryTeam = newTeam("canary")
		canaryNS = framework.UniqueName("canary")
		canaryTeam.Create(framework.Ctx(), framework.Namespace(canaryNS), framework.ConfigMap(canaryNS, "canary", nil))
		canaryTeam.place(newCRP("canary", pickAll(), namespaceSelector(canaryNS)))
		expectCanaryServes()
		t = newTeam("hostile")
		t.Create(framework.Ctx(), blobCRD())
	})

	DescribeTable("is reported on the placement, naming what is wrong and how to fix it, while other placements keep working",
		func(want report, tc hostileInput) {
			ns := framework.UniqueName("h")
			t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"a": "b"}))
			if tc.objects != nil {
				Eventually(func() error {
					for _, o := range tc.objects(ns) {
						// The Blob kind may take a moment to be served.
						if err := t.Client.Create(framework.Ctx(), o); client.IgnoreAlreadyExists(err) != nil {
							return err
						}
					}
					return nil
				}).Should(Succeed())
			}
			p := tc.placement(ns, "hostile")
			t.place(p)
			prefix := conditionPrefix(p)
			Eventually(func(g Gomega) {
				g.Expect(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(p), p)).To(Succeed())
				st := p.GetPlacementStatus()
				c := framework.Condition(st.Conditions, prefix+want.condition)
				if want.perCluster {
					g.Expect(st.PerClusterPlacementStatuses).To(HaveLen(1), "%s", describeClusters(st))
					c = framework.Condition(st.PerClusterPlacementStatuses[0].Conditions, want.condition)
				}
				g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "%+v%s", c, describeClusters(st))
				g.Expect(c.Reason).To(Equal(want.reason), "%+v", c)
				for _, m := range want.message(ns) {
					g.Expect(c.Message).To(ContainSubstring(m))
				}
			}).Should(Succeed())
			expectCanaryServes()
		}, hostileCases)

	It("places a placement whose name is at the 63-character limit", func() {
		ns := framework.UniqueName("long")
		t.Create(framework.Ctx(), framework.Namespace(ns))
		name := strings.Repeat("n", 63)
		p := newCRP(name, pickFixed("member-2"), namespaceSelector(ns))
		t.place(p)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, name), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "0")
		}).Should(Succeed())
	})

	It("places a namespace that does not exist yet once it is created, selecting nothing meanwhile", func() {
		ns := framework.UniqueName("later")
		t.place(newCRP("later", pickFixed("member-2"), namespaceSelector(ns)))
		Eventually(func(g Gomega) {
			st := t.getCRP(g, "later").Status
			g.Expect(framework.Condition(st.Conditions, "ClusterResourcePlacementScheduled").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(st.SelectedResources).To(BeEmpty())
		}).Should(Succeed())
		// One object at a time: created together, they may land in one
		// snapshot or two.
		t.Create(framework.Ctx(), framework.Namespace(ns))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "later"), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns)}, "1")
		}).Should(Succeed())
		t.Create(framework.Ctx(), framework.ConfigMap(ns, "settings", nil))
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, "later"), []string{"member-2"}, []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings")}, "2")
		}).Should(Succeed())
	})

	It("places 10,000 selected objects", func() {
		const n = 10000
		ns := framework.UniqueName("many")
		t.Create(framework.Ctx(), framework.Namespace(ns))
		By("creating the objects, 16 at a time")
		cfg := rest.CopyConfig(t.Config)
		cfg.QPS = -1 // no client-side rate limit
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := w; i < n; i += 16 {
					if err := c.Create(framework.Ctx(), framework.ConfigMap(ns, fmt.Sprintf("cm-%05d", i), map[string]string{"i": fmt.Sprint(i)})); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		Expect(errs).To(BeEmpty())

		many := newCRP("many", pickFixed("member-2"), namespaceSelector(ns))
		t.place(many)
		// Removing 10,000 objects from member-2 is waited for, not left to
		// run under the specs after this one.
		DeferCleanup(t.deletePlacement, many)
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "many")
			g.Expect(crp.Status.SelectedResources).To(HaveLen(n + 1))
			c := framework.Condition(crp.Status.Conditions, "ClusterResourcePlacementAvailable")
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%+v%s", c, describeClusters(&crp.Status))
		}).WithTimeout(10 * time.Minute).Should(Succeed())
		uids := func() map[string]types.UID {
			list := &corev1.ConfigMapList{}
			Expect(memberClient("member-2").List(framework.Ctx(), list, client.InNamespace(ns))).To(Succeed())
			out := map[string]types.UID{}
			for _, cm := range list.Items {
				if strings.HasPrefix(cm.Name, "cm-") {
					out[cm.Name] = cm.UID
				}
			}
			return out
		}
		before := uids()
		Expect(before).To(HaveLen(n))

		By("adding an object that sorts first: every snapshot shard, and so every Work, passes one object on to the next")
		t.Create(framework.Ctx(), framework.ConfigMap(ns, "cm-00000a", nil))
		Eventually(func(g Gomega) {
			crp := t.getCRP(g, "many")
			g.Expect(crp.Status.SelectedResources).To(HaveLen(n + 2))
			c := framework.Condition(crp.Status.Conditions, "ClusterResourcePlacementAvailable")
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%+v%s", c, describeClusters(&crp.Status))
			g.Expect(c.ObservedGeneration).To(Equal(crp.Generation))
			g.Expect(crp.Status.ObservedResourceIndex).To(Equal("1"))
		}).WithTimeout(5 * time.Minute).Should(Succeed())
		after := uids()
		Expect(after).To(HaveKey("cm-00000a"))
		delete(after, "cm-00000a")
		Expect(after).To(Equal(before), "objects that moved from one Work to another were handed over, not deleted and re-created")
		expectCanaryServes()
	})
})
