package shards

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/internal/workhomes"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var scheme = framework.NewScheme()

// placedApp is a team's namespace with a ConfigMap, placed by a PickAll
// placement "app" from a team workspace on a given shard.
type placedApp struct {
	shard, namespace string
	// cluster is the team workspace's logical cluster.
	cluster string
	team    client.Client
}

// placeApp creates a team workspace on the shard and places an app from it
// as the team.
func placeApp(ctx context.Context, shard string) *placedApp {
	app := teamOn(ctx, shard)
	app.place(ctx)
	return app
}

// teamOn creates a team workspace on the shard and returns an app of it,
// not placed yet.
func teamOn(ctx context.Context, shard string) *placedApp {
	hub := proxy.Hub()
	name := framework.UniqueName("team")
	path, err := hub.CreateTeamWorkspaceOn(ctx, name, shard)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	cluster, err := hub.TeamWorkspaceCluster(ctx, name)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	team := framework.TeamIn(ctx, hub, scheme, path)
	return &placedApp{shard: shard, namespace: framework.UniqueName("app-" + shard), cluster: cluster, team: team.Client}
}

// place creates, as the team, the app's namespace with its ConfigMap and
// the placement "app" of the namespace.
func (a *placedApp) place(ctx context.Context) {
	c := a.team
	ExpectWithOffset(2, c.Create(ctx, framework.Namespace(a.namespace))).To(Succeed())
	ExpectWithOffset(2, c.Create(ctx, framework.ConfigMap(a.namespace, "settings", map[string]string{"shard": a.shard}))).To(Succeed())
	crp := &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: a.namespace}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType},
		},
	}
	ExpectWithOffset(2, c.Create(ctx, crp)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(c.Delete(ctx, crp))).To(Succeed())
	})
}

// stop stops a shard for the rest of the spec; it starts again when the
// spec ends, unless the spec starts it first with the function returned.
func stop(h *localfleet.Hub) (start func(context.Context)) {
	ExpectWithOffset(1, h.Stop()).To(Succeed())
	started := false
	DeferCleanup(func(ctx SpecContext) {
		if !started {
			Expect(h.Start(ctx)).To(Succeed())
		}
	})
	return func(ctx context.Context) {
		ExpectWithOffset(1, h.Start(ctx)).To(Succeed())
		started = true
	}
}

// expectOnMember waits until the app's ConfigMap is on the member and its
// placement is Available, and returns the ConfigMap there.
func (a *placedApp) expectOnMember(ctx context.Context) *corev1.ConfigMap {
	onMember, err := member.Client(scheme)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{}
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(onMember.Get(ctx, client.ObjectKey{Namespace: a.namespace, Name: "settings"}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("shard", a.shard))
		crp := &placementv1beta1.ClusterResourcePlacement{}
		g.Expect(a.team.Get(ctx, client.ObjectKey{Name: "app"}, crp)).To(Succeed())
		available := meta.FindStatusCondition(crp.Status.Conditions, string(placementv1beta1.ClusterResourcePlacementAvailableConditionType))
		g.Expect(available).NotTo(BeNil(), "%+v", crp.Status)
		g.Expect(available.Status).To(Equal(metav1.ConditionTrue), "%+v", available)
		g.Expect(available.ObservedGeneration).To(Equal(crp.Generation))
	}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	return cm
}

// works returns the generation of each Work the app's workspace has in its
// shard's home of Work, by name: root:fleet for the root shard, the shard's
// works workspace for another.
func (a *placedApp) works(ctx context.Context, g Gomega) map[string]int64 {
	home := "root:fleet"
	if a.shard != "root" {
		home += ":" + workhomes.WorkspaceName(a.shard)
	}
	fleet, err := proxy.Hub().Client(home, scheme)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	list := &placementv1beta1.WorkList{}
	g.ExpectWithOffset(1, fleet.List(ctx, list, client.MatchingLabels{placementv1beta1.WorkspaceLabel: a.cluster})).To(Succeed())
	out := map[string]int64{}
	for _, w := range list.Items {
		out[w.Name] = w.Generation
	}
	return out
}

var _ = Describe("Placements in team workspaces on both shards", func() {
	It("reach the member, each scheduled and rolled out by the shard that holds its workspace", func(ctx SpecContext) {
		for _, shard := range []string{"root", "shard-1"} {
			By("placing from a team workspace on " + shard)
			placeApp(ctx, shard).expectOnMember(ctx)
		}
		for shard, h := range map[string]*localfleet.Hub{"root": root, "shard-1": shard1} {
			m, err := localfleet.Scrape(h.MetricsURL())
			Expect(err).NotTo(HaveOccurred())
			engaged, _ := m.Sum("fleet_engaged_workspaces", nil)
			Expect(engaged).To(BeNumerically(">=", 1), "the controllers of %s engage the team workspaces it holds", shard)
		}
	})

	It("go on from the other shards while one is down, and resume on it without rewrites once it is back", func(ctx SpecContext) {
		onShard1 := placeApp(ctx, "shard-1")
		before := onShard1.expectOnMember(ctx)
		var works map[string]int64
		Eventually(func(g Gomega) { works = onShard1.works(ctx, g); g.Expect(works).NotTo(BeEmpty()) }).WithTimeout(30 * time.Second).Should(Succeed())

		By("stopping shard-1")
		startShard1 := stop(shard1)

		By("a team on the root shard places meanwhile; what shard-1's team placed stays on the member")
		placeApp(ctx, "root").expectOnMember(ctx)
		onMember, err := member.Client(scheme)
		Expect(err).NotTo(HaveOccurred())
		now := &corev1.ConfigMap{}
		Expect(onMember.Get(ctx, client.ObjectKeyFromObject(before), now)).To(Succeed())
		Expect(now.UID).To(Equal(before.UID))

		By("starting shard-1 again: its placement is Available, with the same Work and the same object on the member")
		startShard1(ctx)
		onShard1.expectOnMember(ctx)
		Consistently(func(g Gomega) {
			g.Expect(onShard1.works(ctx, g)).To(Equal(works))
			g.Expect(onMember.Get(ctx, client.ObjectKeyFromObject(before), now)).To(Succeed())
			g.Expect(now.UID).To(Equal(before.UID))
			g.Expect(now.ResourceVersion).To(Equal(before.ResourceVersion))
		}).WithTimeout(15 * time.Second).WithPolling(time.Second).Should(Succeed())
	})

	It("go on placing from a further shard while the root shard is down, its Work kept in the shard's own home", func(ctx SpecContext) {
		placedBefore := placeApp(ctx, "shard-1")
		placedBefore.expectOnMember(ctx)
		// Workspaces are made in root:teams, on the root shard: this one
		// while it is up.
		app := teamOn(ctx, "shard-1")

		By("stopping the root shard")
		startRoot := stop(root)

		By("a team on shard-1 places a new app: shard-1 schedules it, writes its Work in its own home, and the member applies it")
		app.place(ctx)
		app.expectOnMember(ctx)

		By("starting the root shard again: both placements stay Available")
		startRoot(ctx)
		placedBefore.expectOnMember(ctx)
		app.expectOnMember(ctx)
	})
})
