package board

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

func namespaceWithSettings(ns string) []client.Object {
	return []client.Object{framework.Namespace(ns), framework.ConfigMap(ns, "settings", map[string]string{"color": "blue"})}
}

func crp(name, ns string, policy *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterResourcePlacement {
	return &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: placementv1beta1.PlacementSpec{
		ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: ns}},
		Policy:            policy,
	}}
}

// canaryThenProd updates the canary cluster, waits for an approval, then
// updates the prod clusters.
func canaryThenProd() *placementv1beta1.ClusterStagedUpdateStrategy {
	return &placementv1beta1.ClusterStagedUpdateStrategy{ObjectMeta: metav1.ObjectMeta{Name: "canary-then-prod"},
		Spec: placementv1beta1.UpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "canary"}},
				AfterStageTasks: []placementv1beta1.StageTask{{Type: placementv1beta1.StageTaskTypeApproval}}},
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
		}}}
}

// tab is a browser tab with a cookie jar of its own: one person.
func tab() context.Context {
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	DeferCleanup(cancel)
	Expect(chromedp.Do(ctx, chromedp.Navigate("about:blank"))).To(Succeed())
	return ctx
}

func do(tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	ExpectWithOffset(1, chromedp.Do(tab, steps...)).To(Succeed())
}

// eval evaluates a script in the page.
func eval[T any](g Gomega, tab context.Context, script string) T {
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](script))
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred(), script)
	return v
}

// pageText is what the page shows.
func pageText(g Gomega, tab context.Context) string {
	return eval[string](g, tab, `document.body.innerText`)
}

// signIn signs a person in on the board's sign-in form.
func signIn(tab context.Context, path, token string) {
	do(tab, chromedp.Navigate(boardURL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`form.signin`)),
		chromedp.SetValue(chromedp.CSS(`input[name=workspace]`), path),
		chromedp.SetValue(chromedp.CSS(`input[name=token]`), token),
		chromedp.Click(chromedp.CSS(`form.signin button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`header .user`)))
	// Marks this page load: a view that updates without a reload keeps it.
	do(tab, chromedp.Evaluate[chromedp.Void](`window.boardPageLoad = 'signed-in'`))
}

func show(tab context.Context, path, view string) {
	do(tab, chromedp.Evaluate[chromedp.Void](`location.hash = `+jsString("#/"+path+"/"+view)))
}

func jsString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `\'`) + `'` }

func placementsShown(g Gomega, tab context.Context) []string {
	return eval[[]string](g, tab, `[...document.querySelectorAll('[data-placement]')].map(e => e.dataset.placement)`)
}

// screenshot saves the page as docs/board.md shows it, into
// FLEET_BOARD_SCREENSHOTS when set (make board-screenshots), else beside
// the suite's logs.
func screenshot(tab context.Context, name string) {
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	out := os.Getenv("FLEET_BOARD_SCREENSHOTS")
	if out == "" {
		out = filepath.Join(dir, "screenshots")
	}
	Expect(os.MkdirAll(out, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(out, "board-"+name+".png"), png, 0o644)).To(Succeed())
}

var _ = Describe("The fleet board", Ordered, func() {
	var teamA, teamB *framework.Team
	var browserA context.Context

	BeforeAll(func(ctx SpecContext) {
		teamA, teamB = framework.NewTeam(ctx, hub, scheme, "board-a"), framework.NewTeam(ctx, hub, scheme, "board-b")
		teamA.Create(ctx, namespaceWithSettings("web")...)
		teamA.Create(ctx, namespaceWithSettings("broken")...)
		teamA.Create(ctx, canaryThenProd())
		staged := crp("staged", "web", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType})
		staged.Spec.Strategy.Type = placementv1beta1.ExternalRolloutStrategyType
		teamA.Create(ctx, staged)
		teamA.Create(ctx, &placementv1beta1.ResourceOverride{ObjectMeta: metav1.ObjectMeta{Namespace: "broken", Name: "missing-key"},
			Spec: placementv1beta1.ResourceOverrideSpec{
				ResourceSelectors: []placementv1beta1.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}},
				Policy: &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
					ClusterSelector: &placementv1beta1.ClusterSelector{}, OverrideType: placementv1beta1.JSONPatchOverrideType,
					JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{Operator: placementv1beta1.JSONPatchOverrideOpReplace,
						Path: "/data/missing", Value: apiextensionsv1.JSON{Raw: []byte(`"x"`)}}},
				}}},
			}})
		teamA.Create(ctx, crp("broken", "broken", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{"member-1"}}))
		teamA.Create(ctx, namespaceWithSettings("prod-only")...)
		teamA.Create(ctx, crp("prod-only", "prod-only", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickAllPlacementType,
			Affinity: &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{
					{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}}}}}))
		// A run plans with the clusters scheduled when it starts.
		Eventually(func(g Gomega) {
			p := &placementv1beta1.ClusterResourcePlacement{}
			g.Expect(teamA.Client.Get(ctx, client.ObjectKey{Name: "staged"}, p)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, "ClusterResourcePlacementScheduled")).To(BeTrue())
			g.Expect(p.Status.PerClusterPlacementStatuses).To(HaveLen(3))
		}).Should(Succeed())
		teamA.Create(ctx, &placementv1beta1.ClusterStagedUpdateRun{ObjectMeta: metav1.ObjectMeta{Name: "run-1"},
			Spec: placementv1beta1.UpdateRunSpec{PlacementName: "staged", StagedUpdateStrategyName: "canary-then-prod", ResourceSnapshotIndex: "0", State: placementv1beta1.UpdateRunStateRun}})
		browserA = tab()
	})

	It("signs a team in with its token and shows its placements only", func() {
		signIn(browserA, teamA.Path, teamA.Config.BearerToken)
		show(browserA, teamA.Path, "placements")
		Eventually(func(g Gomega) {
			g.Expect(placementsShown(g, browserA)).To(ConsistOf("staged", "broken", "prod-only"), pageText(g, browserA))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eval[string](g, browserA, `document.querySelector('[data-cell="broken@member-1"]')?.dataset.state ?? ''`)).To(Equal("failed"))
		}).Should(Succeed())
		By("the cells are laid out in their rows and columns, the reason on hover")
		Expect(eval[bool](Default, browserA, `(() => {
			const a = document.querySelector('[data-cell="broken@member-1"]').getBoundingClientRect()
			const b = document.querySelector('[data-cell="staged@member-2"]').getBoundingClientRect()
			return a.width > 0 && a.height > 0 && a.top !== b.top && a.left !== b.left
		})()`)).To(BeTrue())
		Expect(eval[string](Default, browserA, `document.querySelector('[data-cell="broken@member-1"]').title`)).To(ContainSubstring("replace /data/missing"))
		screenshot(browserA, "placements")
	})

	It("shows a staged rollout advance and lets the team approve its stage", func() {
		show(browserA, teamA.Path, "placement/_/staged")
		approve := `[data-approval="run-1-after-canary"]`
		Eventually(func(g Gomega) {
			g.Expect(eval[bool](g, browserA, `!!document.querySelector('`+approve+`')`)).To(BeTrue(), pageText(g, browserA))
			g.Expect(eval[string](g, browserA, `document.querySelector('[data-stage="prod"]').dataset.stageState`)).NotTo(Equal("succeeded"))
		}).Should(Succeed())
		screenshot(browserA, "rollout-waiting")

		do(browserA, chromedp.Click(chromedp.CSS(approve)))
		By("the page follows the run to its end without a reload")
		Eventually(func(g Gomega) {
			g.Expect(eval[string](g, browserA, `document.querySelector('[data-stage="prod"]').dataset.stageState`)).To(Equal("succeeded"), pageText(g, browserA))
		}).Should(Succeed())
		Expect(eval[string](Default, browserA, `window.boardPageLoad`)).To(Equal("signed-in"))
		req := &placementv1beta1.ClusterApprovalRequest{}
		Expect(teamA.Client.Get(context.Background(), client.ObjectKey{Name: "run-1-after-canary"}, req)).To(Succeed())
		approved := meta.FindStatusCondition(req.Status.Conditions, placementv1beta1.ApprovalRequestConditionApproved)
		Expect(approved).NotTo(BeNil())
		Expect(approved.Message).To(ContainSubstring("approved on the fleet board by"))
		Expect(eval[[]string](Default, browserA, `[...document.querySelectorAll('[data-cluster-row]')].map(e => e.dataset.clusterRow)`)).To(ConsistOf("member-1", "member-2", "member-3"))
		screenshot(browserA, "rollout-done")
	})

	It("shows why an override failed", func() {
		show(browserA, teamA.Path, "placement/_/broken")
		Eventually(func(g Gomega) {
			g.Expect(pageText(g, browserA)).To(And(ContainSubstring("OverriddenFailed"), ContainSubstring("replace /data/missing")))
		}).Should(Succeed())
		Expect(eval[int](Default, browserA, `[...document.querySelectorAll('[data-cluster-row]')].filter(e => e.getBoundingClientRect().height > 0).length`)).To(Equal(1))
		screenshot(browserA, "override-failed")

		By("a placement's page says why the scheduler turned a cluster down")
		show(browserA, teamA.Path, "placement/_/prod-only")
		Eventually(func(g Gomega) {
			row := eval[string](g, browserA, `document.querySelector('[data-cluster-row="member-1"]')?.innerText ?? ''`)
			g.Expect(row).To(And(ContainSubstring("not picked"), ContainSubstring("affinity")), pageText(g, browserA))
			g.Expect(eval[string](g, browserA, `document.querySelector('[data-cluster-row="member-2"]')?.innerText ?? ''`)).To(ContainSubstring("available"))
		}).Should(Succeed())
		screenshot(browserA, "decisions")
		show(browserA, teamA.Path, "events")
		Eventually(func(g Gomega) {
			g.Expect(eval[int](g, browserA, `document.querySelectorAll('table.events tbody tr').length`)).To(BeNumerically(">", 0))
		}).Should(Succeed())
		screenshot(browserA, "events")
	})

	It("shows drifted and diffed clusters in the grid", func(ctx SpecContext) {
		teamA.Create(ctx, namespaceWithSettings("drift")...)
		teamA.Create(ctx, namespaceWithSettings("diff")...)
		drifty := crp("drifty", "drift", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{"member-2"}})
		drifty.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{WhenToApply: placementv1beta1.WhenToApplyTypeIfNotDrifted}
		diffy := crp("diffy", "diff", &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickFixedPlacementType, ClusterNames: []string{"member-3"}})
		diffy.Spec.Strategy.ApplyStrategy = &placementv1beta1.ApplyStrategy{Type: placementv1beta1.ApplyStrategyTypeReportDiff}
		teamA.Create(ctx, drifty, diffy)

		By("someone edits the placed ConfigMap on member-2")
		m, err := members.Named("member-2").Client(scheme)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			cm := &corev1.ConfigMap{}
			if err := m.Get(ctx, client.ObjectKey{Namespace: "drift", Name: "settings"}, cm); err != nil {
				return err
			}
			cm.Data["color"] = "edited on the member"
			return m.Update(ctx, cm)
		}).Should(Succeed())

		show(browserA, teamA.Path, "placements")
		Eventually(func(g Gomega) {
			g.Expect(eval[string](g, browserA, `document.querySelector('[data-cell="drifty@member-2"]')?.dataset.state ?? ''`)).To(Equal("drifted"), pageText(g, browserA))
			g.Expect(eval[string](g, browserA, `document.querySelector('[data-cell="diffy@member-3"]')?.dataset.state ?? ''`)).To(Equal("diffed"), pageText(g, browserA))
		}).Should(Succeed())
		screenshot(browserA, "placements")
	})

	It("shows another team none of the first team's objects", func() {
		browserB := tab()
		signIn(browserB, teamB.Path, teamB.Config.BearerToken)
		show(browserB, teamB.Path, "placements")
		Eventually(func(g Gomega) {
			g.Expect(pageText(g, browserB)).To(ContainSubstring("No placements in " + teamB.Path))
		}).Should(Succeed())
		Expect(placementsShown(Default, browserB)).To(BeEmpty())

		By("team B asks for team A's workspace, on the page and on the API")
		show(browserB, teamA.Path, "placements")
		Eventually(func(g Gomega) {
			g.Expect(pageText(g, browserB)).To(ContainSubstring(teamA.Path))
			g.Expect(pageText(g, browserB)).NotTo(ContainSubstring("Loading"))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(placementsShown(g, browserB)).To(BeEmpty())
		}, "3s").Should(Succeed())
		status, err := chromedp.Run(browserB, chromedp.Evaluate[int](`fetch('/api/view?view=placement&workspace=`+teamA.Path+`&name=staged').then(r => r.status)`, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(403))
	})

	It("is served by the hub itself with --board: over HTTPS, a team signs in with its token and reads its views", func() {
		tlsConfig, err := rest.TLSConfigFor(rest.AnonymousClientConfig(hub.Admin))
		Expect(err).NotTo(HaveOccurred())
		jar, err := cookiejar.New(nil)
		Expect(err).NotTo(HaveOccurred())
		c := &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 30 * time.Second}
		signIn := func(token string, header bool) *http.Response {
			body, _ := json.Marshal(map[string]string{"token": token, "workspace": teamA.Path})
			req, err := http.NewRequest(http.MethodPost, hubBoardURL+"/api/signin", bytes.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			if header {
				req.Header.Set("X-Fleet-Board", "1")
			}
			res, err := c.Do(req)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(res.Body.Close)
			return res
		}
		Expect(signIn(teamA.Config.BearerToken, false).StatusCode).To(Equal(http.StatusForbidden), "a sign-in without the board's header")
		Expect(signIn("not-a-token", true).StatusCode).To(Equal(http.StatusUnauthorized), "a token the hub does not accept")
		Expect(signIn(teamB.Config.BearerToken, true).StatusCode).To(Equal(http.StatusUnauthorized), "team B's token in team A's workspace")

		res := signIn(teamA.Config.BearerToken, true)
		Expect(res.StatusCode).To(Equal(http.StatusOK))
		cookies := res.Cookies()
		Expect(cookies).To(HaveLen(1))
		Expect(cookies[0].Secure && cookies[0].HttpOnly).To(BeTrue(), "the session cookie is Secure and HttpOnly")
		var session struct{ User string }
		Expect(json.NewDecoder(res.Body).Decode(&session)).To(Succeed())
		Expect(session.User).To(Equal("system:serviceaccount:default:team-admin"))

		res, err = c.Get(hubBoardURL + "/api/view?view=placements&workspace=" + teamA.Path)
		Expect(err).NotTo(HaveOccurred())
		defer res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))
		var grid struct{ Placements []struct{ Name string } }
		Expect(json.NewDecoder(res.Body).Decode(&grid)).To(Succeed())
		Expect(grid.Placements).To(ContainElements(HaveField("Name", "staged"), HaveField("Name", "broken"), HaveField("Name", "prod-only")))
	})

	It("shows the platform admin the fleet map and the teams' workspaces", func() {
		admin := tab()
		do(admin, chromedp.Navigate(adminLink), chromedp.WaitVisible(chromedp.CSS(`header .user`)))
		Eventually(func(g Gomega) {
			g.Expect(eval[[]string](g, admin, `[...document.querySelectorAll('[data-cluster]')].map(e => e.dataset.cluster)`)).To(ConsistOf("member-1", "member-2", "member-3"))
			g.Expect(eval[int](g, admin, `document.querySelectorAll('.tile.health-healthy').length`)).To(Equal(3))
		}).Should(Succeed())
		By("a cordoned cluster is marked")
		fleet, err := hub.Client("root:fleet", scheme)
		Expect(err).NotTo(HaveOccurred())
		setTaints := func(taints []clusterv1beta1.Taint) {
			Eventually(func() error {
				m := &clusterv1beta1.MemberCluster{}
				if err := fleet.Get(context.Background(), client.ObjectKey{Name: "member-3"}, m); err != nil {
					return err
				}
				m.Spec.Taints = taints
				return fleet.Update(context.Background(), m)
			}).Should(Succeed())
		}
		setTaints([]clusterv1beta1.Taint{{Key: clusterv1beta1.CordonTaintKey, Value: clusterv1beta1.CordonTaintValue, Effect: corev1.TaintEffectNoSchedule}})
		DeferCleanup(setTaints, []clusterv1beta1.Taint(nil))
		Eventually(func(g Gomega) {
			g.Expect(eval[string](g, admin, `document.querySelector('[data-cluster="member-3"]').innerText`)).To(ContainSubstring("cordoned"))
		}).Should(Succeed())
		screenshot(admin, "clusters")
		Expect(eval[[]string](Default, admin, `[...document.querySelectorAll('header select option')].map(o => o.value)`)).To(ContainElement(teamA.Path))

		By("the admin switches to team A's workspace")
		do(admin, chromedp.SetValue(chromedp.CSS(`header select`), teamA.Path),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('header select').dispatchEvent(new Event('change', {bubbles: true}))`))
		Eventually(func(g Gomega) {
			g.Expect(eval[string](g, admin, `decodeURIComponent(location.hash)`)).To(Equal("#/" + teamA.Path + "/clusters"))
		}).Should(Succeed())
		show(admin, teamA.Path, "placements")
		Eventually(func(g Gomega) {
			g.Expect(placementsShown(g, admin)).To(ContainElements("staged", "broken", "prod-only", "drifty", "diffy"), pageText(g, admin))
		}).Should(Succeed())

		By("the browser keeps no credential: the session cookie is out of scripts' reach, and nothing is stored")
		Expect(eval[string](Default, admin, `document.cookie`)).To(BeEmpty())
		Expect(eval[int](Default, admin, `localStorage.length + sessionStorage.length`)).To(BeZero())

		By("a link works once")
		again := tab()
		do(again, chromedp.Navigate(adminLink))
		Expect(pageText(Default, again)).To(ContainSubstring("used already"))
	})
})
