package placement

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return raw
}

func allMembers() []string {
	var out []string
	for _, m := range members {
		out = append(out, m.Name)
	}
	return out
}

// fleetClient is an admin client for root:fleet (member clusters, Work,
// grants).
func fleetClient() client.Client {
	c, err := hub.Client("root:fleet", scheme)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return c
}

// worksClient reads the Work of every home as the hub admin: root:fleet's,
// and on a hub of several shards each further shard's.
func worksClient() client.Reader {
	c, err := hub.Works(scheme)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return c
}

func memberClient(name string) client.Client {
	return framework.MemberClient(members.Named(name), scheme)
}

// team is a framework.Team and the placements its spec created.
type team struct {
	*framework.Team
	// placed names the placements this spec created, in order.
	placed []string
}

// platform is the platform workspace root:fleet as its admin sees it, for
// specs of what only platform-wide placements may do.
func platform() *team {
	return &team{Team: &framework.Team{Path: "root:fleet", Client: fleetClient()}}
}

// createNamespace creates namespace ns and objs in it in the team's
// workspace, and deletes the namespace when the spec ends (root:fleet
// outlives every spec).
func (t *team) createNamespace(ns string, objs ...client.Object) {
	t.Create(framework.Ctx(), append([]client.Object{framework.Namespace(ns)}, objs...)...)
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(t.Client.Delete(framework.Ctx(), framework.Namespace(ns)))).To(Succeed())
	})
}

// newTeam creates a team workspace of its own for a spec.
func newTeam(prefix string) *team {
	return &team{Team: framework.NewTeam(framework.Ctx(), hub, scheme, prefix)}
}

// teamOnEachShard creates a team workspace of its own on each shard of
// the hub.
func teamOnEachShard(prefix string) []*team {
	if shards < 2 {
		return []*team{newTeam(prefix)}
	}
	teams := []*team{}
	for i := range shards {
		path, err := hub.CreateTeamWorkspaceOn(framework.Ctx(), framework.UniqueName(prefix), localfleet.ShardName(i))
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		teams = append(teams, &team{Team: framework.TeamIn(framework.Ctx(), hub, scheme, path)})
	}
	return teams
}

// place creates a placement and releases it when the spec ends.
func (t *team) place(p placementv1beta1.PlacementObj) {
	released.waitFor(t, p)
	ExpectWithOffset(1, t.Client.Create(framework.Ctx(), p)).To(Succeed(), "creating placement %s in %s", p.GetName(), t.Path)
	t.placed = append(t.placed, p.GetName())
	DeferCleanup(t.release, p)
}

// release deletes a placement at the end of a spec. A Serial spec waits
// until it is gone, as the specs of the faults do for every step. Any other
// spec goes on: removing what a placement placed takes a member at least
// five seconds (kube-controller-manager waits that long before it finalizes
// a deleted namespace), and the next spec uses names of its own. What is
// still being removed is waited for before the next Serial spec, before a
// placement of the same name in the same workspace, and at the end of the
// suite.
func (t *team) release(p placementv1beta1.PlacementObj) {
	if CurrentSpecReport().IsSerial {
		t.deletePlacement(p)
		return
	}
	err := t.Client.Delete(framework.Ctx(), p)
	if apierrors.IsNotFound(err) {
		return // the spec deleted it itself and waited
	}
	Expect(err).NotTo(HaveOccurred(), "deleting placement %s in %s", p.GetName(), t.Path)
	released.add(t, p)
}

func (t *team) deletePlacement(p placementv1beta1.PlacementObj) {
	Expect(client.IgnoreNotFound(t.Client.Delete(framework.Ctx(), p))).To(Succeed())
	// A placement of 10,000 objects takes minutes to remove from its member.
	Eventually(func() bool { return t.placementGone(p) }).WithTimeout(6*time.Minute).Should(BeTrue(), "placement %s in %s is not deleted", p.GetName(), t.Path)
}

func (t *team) placementGone(p placementv1beta1.PlacementObj) bool {
	return apierrors.IsNotFound(t.Client.Get(framework.Ctx(), client.ObjectKeyFromObject(p), p.DeepCopyObject().(client.Object)))
}

func (t *team) getCRP(g Gomega, name string) *placementv1beta1.ClusterResourcePlacement {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	g.ExpectWithOffset(1, t.Client.Get(framework.Ctx(), client.ObjectKey{Name: name}, crp)).To(Succeed())
	return crp
}

// update changes the object obj names, retrying on conflicts: obj is
// refreshed to the latest version before each change.
func update[T client.Object](c client.Client, obj T, change func(T)) {
	EventuallyWithOffset(1, func() error {
		if err := c.Get(framework.Ctx(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return c.Update(framework.Ctx(), obj)
	}).Should(Succeed())
}

// updateCRP changes a placement's spec, retrying on conflicts.
func (t *team) updateCRP(name string, change func(*placementv1beta1.ClusterResourcePlacement)) {
	update(t.Client, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name}}, change)
}

// logicalCluster is the logical cluster of the team's workspace, as Work
// labels name it.
func (t *team) logicalCluster(g Gomega, crp string) string {
	return logicalcluster.From(t.getCRP(g, crp)).String()
}

// latestPolicySnapshot returns the placement's latest scheduling policy
// snapshot.
func (t *team) latestPolicySnapshot(g Gomega, crp string) *placementv1beta1.ClusterSchedulingPolicySnapshot {
	list := &placementv1beta1.ClusterSchedulingPolicySnapshotList{}
	g.ExpectWithOffset(1, t.Client.List(framework.Ctx(), list, client.MatchingLabels{
		placementv1beta1.PlacementTrackingLabel: crp, placementv1beta1.IsLatestSnapshotLabel: "true",
	})).To(Succeed())
	g.ExpectWithOffset(1, list.Items).To(HaveLen(1), "latest policy snapshots of %s", crp)
	return &list.Items[0]
}

// decisions are the scheduler's decisions on the latest policy snapshot, by
// cluster.
func (t *team) decisions(g Gomega, crp string) map[string]placementv1beta1.ClusterDecision {
	out := map[string]placementv1beta1.ClusterDecision{}
	for _, d := range t.latestPolicySnapshot(g, crp).Status.ClusterDecisions {
		out[d.ClusterName] = d
	}
	return out
}

// bindings lists the placement's bindings that are not being deleted.
func (t *team) bindings(g Gomega, crp string) []placementv1beta1.ClusterResourceBinding {
	list := &placementv1beta1.ClusterResourceBindingList{}
	g.ExpectWithOffset(1, t.Client.List(framework.Ctx(), list, client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: crp})).To(Succeed())
	var out []placementv1beta1.ClusterResourceBinding
	for _, b := range list.Items {
		if b.DeletionTimestamp.IsZero() {
			out = append(out, b)
		}
	}
	return out
}

// activeBindings maps each cluster with a Scheduled or Bound binding to it.
func (t *team) activeBindings(g Gomega, crp string) map[string]placementv1beta1.ClusterResourceBinding {
	out := map[string]placementv1beta1.ClusterResourceBinding{}
	for _, b := range t.bindings(g, crp) {
		if b.Spec.State != placementv1beta1.BindingStateUnscheduled {
			g.ExpectWithOffset(1, out).NotTo(HaveKey(b.Spec.TargetCluster), "two active bindings for %s", b.Spec.TargetCluster)
			out[b.Spec.TargetCluster] = b
		}
	}
	return out
}

// Objects.

// deployment runs one pod without resource requests, so the members'
// available CPU (a scheduling property) does not change.
func deployment(ns, name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

func namespaceID(ns string) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: ns}
}

func configMapID(ns, name string) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
}

func deploymentID(ns, name string) placementv1beta1.ResourceIdentifier {
	return placementv1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: name}
}

// appNamespace creates, in the team's workspace, a namespace with a ConfigMap
// "settings" (data: team=<workspace path>) and returns the resources a
// placement of the namespace selects.
func (t *team) appNamespace(prefix string) (string, []placementv1beta1.ResourceIdentifier) {
	ns := framework.UniqueName(prefix)
	t.Create(framework.Ctx(), framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"team": t.Path}))
	return ns, []placementv1beta1.ResourceIdentifier{namespaceID(ns), configMapID(ns, "settings")}
}

// Placements.

func namespaceSelector(name string) placementv1beta1.ResourceSelectorTerm {
	return placementv1beta1.ResourceSelectorTerm{Group: "", Version: "v1", Kind: "Namespace", Name: name}
}

func newCRP(name string, policy *placementv1beta1.PlacementPolicy, selectors ...placementv1beta1.ResourceSelectorTerm) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       placementv1beta1.PlacementSpec{ResourceSelectors: selectors, Policy: policy},
	}
}

func pickFixed(names ...string) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: names}
}

func pickAll(required ...placementv1beta1.ClusterSelectorTerm) *placementv1beta1.PlacementPolicy {
	p := &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType}
	if len(required) > 0 {
		p.Affinity = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: required},
		}}
	}
	return p
}

func pickN(n int32) *placementv1beta1.PlacementPolicy {
	return &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(n)}
}

func labelTerm(labels map[string]string) placementv1beta1.ClusterSelectorTerm {
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}
}

// Status.

func conditionPrefix(p placementv1beta1.PlacementObj) string {
	if p.GetNamespace() == "" {
		return "ClusterResourcePlacement"
	}
	return "ResourcePlacement"
}

// placementConditions are a fully rolled out placement's conditions and
// KubeFleet's reasons for them: placement-level and per cluster.
var placementConditions = []struct{ suffix, reason, perClusterReason string }{
	{"Scheduled", placementv1beta1.SchedulingPolicyFulfilledReason, placementv1beta1.ScheduledReason},
	{"RolloutStarted", placementv1beta1.RolloutStartedReason, placementv1beta1.RolloutStartedReason},
	{"Overridden", placementv1beta1.OverrideNotSpecifiedReason, placementv1beta1.OverrideNotSpecifiedReason},
	{"WorkSynchronized", placementv1beta1.WorkSynchronizedReason, placementv1beta1.AllWorkSyncedReason},
	{"Applied", placementv1beta1.ApplySucceededReason, placementv1beta1.AllWorkAppliedReason},
	{"Available", placementv1beta1.AvailableReason, placementv1beta1.AllWorkAvailableReason},
}

// expectAvailable checks that a placement has rolled out resource snapshot
// index to exactly the clusters, and says so the way KubeFleet does.
func expectAvailable(g Gomega, p placementv1beta1.PlacementObj, clusters []string, selected []placementv1beta1.ResourceIdentifier, index string) {
	expectRolledOut(g, p, clusters, selected, index, placementv1beta1.AllWorkAvailableReason)
}

// expectAvailableUntrackable is expectAvailable for resources whose
// availability members cannot track (custom resources): they count as
// available, and each cluster says why.
func expectAvailableUntrackable(g Gomega, p placementv1beta1.PlacementObj, clusters []string, selected []placementv1beta1.ResourceIdentifier, index string) {
	expectRolledOut(g, p, clusters, selected, index, placementv1beta1.WorkNotAvailabilityTrackableReason)
}

// expectRolledOut checks for its two callers (offset 2).
func expectRolledOut(g Gomega, p placementv1beta1.PlacementObj, clusters []string, selected []placementv1beta1.ResourceIdentifier, index, availableReason string) {
	st := p.GetPlacementStatus()
	gen := p.GetGeneration()
	// Only KubeFleet's condition types: tools that compare the whole list
	// (KubeFleet's own e2e suite does) see no others.
	kubeFleetTypes := []string{conditionPrefix(p) + "StatusSynced"}
	for _, want := range placementConditions {
		kubeFleetTypes = append(kubeFleetTypes, conditionPrefix(p)+want.suffix)
	}
	for _, c := range st.Conditions {
		g.ExpectWithOffset(2, kubeFleetTypes).To(ContainElement(c.Type), "a condition KubeFleet does not set: %+v", c)
	}
	for _, want := range placementConditions {
		c := framework.Condition(st.Conditions, conditionPrefix(p)+want.suffix)
		g.ExpectWithOffset(2, c.Status).To(Equal(metav1.ConditionTrue), "%s: %+v%s", c.Type, c, describeClusters(st))
		g.ExpectWithOffset(2, c.Reason).To(Equal(want.reason), "%s: %+v", c.Type, c)
		g.ExpectWithOffset(2, c.ObservedGeneration).To(Equal(gen), "%s: %+v", c.Type, c)
	}
	g.ExpectWithOffset(2, st.ObservedResourceIndex).To(Equal(index))
	g.ExpectWithOffset(2, st.SelectedResources).To(ConsistOf(selected))
	var names []string
	for _, pcs := range st.PerClusterPlacementStatuses {
		names = append(names, pcs.ClusterName)
		g.ExpectWithOffset(2, pcs.ObservedResourceIndex).To(Equal(index), "observedResourceIndex of %s", pcs.ClusterName)
		g.ExpectWithOffset(2, pcs.FailedPlacements).To(BeEmpty(), "failedPlacements of %s", pcs.ClusterName)
		for _, want := range placementConditions {
			c := framework.Condition(pcs.Conditions, want.suffix)
			reason := want.perClusterReason
			if want.suffix == "Available" {
				reason = availableReason
			}
			g.ExpectWithOffset(2, c.Status).To(Equal(metav1.ConditionTrue), "%s on %s: %+v", c.Type, pcs.ClusterName, c)
			g.ExpectWithOffset(2, c.Reason).To(Equal(reason), "%s on %s: %+v", c.Type, pcs.ClusterName, c)
			g.ExpectWithOffset(2, c.ObservedGeneration).To(Equal(gen), "%s on %s: %+v", c.Type, pcs.ClusterName, c)
		}
	}
	g.ExpectWithOffset(2, names).To(ConsistOf(clusters), "placementStatuses")
}

// Member clusters.

// expectOnlyOn checks that an object exists on exactly the named members.
func expectOnlyOn(g Gomega, obj client.Object, clusters ...string) {
	for _, m := range allMembers() {
		got := obj.DeepCopyObject().(client.Object)
		err := memberClient(m).Get(framework.Ctx(), client.ObjectKeyFromObject(obj), got)
		if slices.Contains(clusters, m) {
			g.ExpectWithOffset(1, err).NotTo(HaveOccurred(), "%T %s on %s", obj, obj.GetName(), m)
			// A namespace that is being deleted is on its way out.
			g.ExpectWithOffset(1, got.GetDeletionTimestamp().IsZero()).To(BeTrue(), "%T %s on %s is being deleted", obj, obj.GetName(), m)
		} else {
			g.ExpectWithOffset(1, apierrors.IsNotFound(err)).To(BeTrue(), "%T %s should not be on %s: %v", obj, obj.GetName(), m, err)
		}
	}
}

// expectGoneFrom checks that an object is absent from the named members.
func expectGoneFrom(g Gomega, obj client.Object, clusters ...string) {
	for _, m := range clusters {
		err := memberClient(m).Get(framework.Ctx(), client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		g.ExpectWithOffset(1, apierrors.IsNotFound(err)).To(BeTrue(), "%T %s should be gone from %s: %v", obj, obj.GetName(), m, err)
	}
}

// selectedClusters lists the clusters the scheduler picked, sorted.
func selectedClusters(decisions map[string]placementv1beta1.ClusterDecision) []string {
	var out []string
	for name, d := range decisions {
		if d.Selected {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// describeDecisions prints decisions for failure messages.
func describeDecisions(decisions map[string]placementv1beta1.ClusterDecision) string {
	s := ""
	for _, name := range keys(decisions) {
		d := decisions[name]
		score := ""
		if d.ClusterScore != nil {
			score = fmt.Sprintf(" affinity=%d topology=%d", ptr.Deref(d.ClusterScore.AffinityScore, 0), ptr.Deref(d.ClusterScore.TopologySpreadScore, 0))
		}
		s += fmt.Sprintf("\n  %s selected=%v%s: %s", name, d.Selected, score, d.Reason)
	}
	return s
}

// describeClusters prints the per-cluster status for failure messages.
func describeClusters(st *placementv1beta1.PlacementStatus) string {
	s := ""
	for _, pcs := range st.PerClusterPlacementStatuses {
		s += fmt.Sprintf("\n  cluster %q index %q", pcs.ClusterName, pcs.ObservedResourceIndex)
		for _, c := range pcs.Conditions {
			s += fmt.Sprintf("\n    %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
		for i, f := range pcs.FailedPlacements {
			if i == 5 {
				s += fmt.Sprintf("\n    ... %d failed in all", len(pcs.FailedPlacements))
				break
			}
			s += fmt.Sprintf("\n    failed %s %s/%s: %s %s", f.Kind, f.Namespace, f.Name, f.Condition.Reason, f.Condition.Message)
		}
	}
	return s
}

// clientIn returns a client with the team's own identity for another
// workspace, to show what the team cannot do there.
func (t *team) clientIn(path string) client.Client {
	cfg := rest.CopyConfig(t.Config)
	cfg.Host = hub.Config(path).Host
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: fleetClient().RESTMapper()})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return c
}

// eventMessages lists the messages of the events of one reason recorded on
// an object of the team's workspace (namespace "" for a cluster-scoped one).
func (t *team) eventMessages(g Gomega, kind, ns, name, reason string) []string {
	events := &corev1.EventList{}
	g.ExpectWithOffset(1, t.Client.List(framework.Ctx(), events)).To(Succeed())
	var messages []string
	for _, e := range events.Items {
		o := e.InvolvedObject
		if o.Kind == kind && o.Namespace == ns && o.Name == name && e.Reason == reason {
			messages = append(messages, e.Message)
		}
	}
	return messages
}
