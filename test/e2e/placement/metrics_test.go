package placement

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var _ = Describe("Metrics", func() {
	It("the hub and the syncers report scheduling, rollouts, queues, heartbeats, Work applies and API requests", func() {
		t := newTeam("metrics")
		ns, selected := t.appNamespace("metrics")
		crp := newCRP(framework.UniqueName("metrics"), pickFixed("member-1", "member-3"), namespaceSelector(ns))
		t.place(crp)
		Eventually(func(g Gomega) {
			expectAvailable(g, t.getCRP(g, crp.Name), []string{"member-1", "member-3"}, selected, "0")
		}).Should(Succeed())

		By("the hub: " + hub.MetricsURL())
		Eventually(func(g Gomega) {
			m, err := localfleet.Scrape(hub.MetricsURL())
			g.Expect(err).NotTo(HaveOccurred())
			expectPositive(g, m, "fleet_scheduling_attempts_total", map[string]string{"result": "scheduled"})
			expectPositive(g, m, "fleet_scheduling_duration_seconds", nil)
			expectPositive(g, m, "fleet_placement_rollout_duration_seconds", map[string]string{"kind": "ClusterResourcePlacement"})
			for _, name := range []string{"member-1", "member-2", "member-3", "member-4"} {
				_, ok := m.Sum("fleet_member_heartbeat_age_seconds", map[string]string{"member": name})
				g.Expect(ok).To(BeTrue(), "heartbeat age of %s", name)
			}
			for _, controller := range []string{"fleet-scheduler-crp", "fleet-rollout-crp", "fleet-workgenerator-crp", "fleet-placement-crp"} {
				_, ok := m.Sum("workqueue_depth", map[string]string{"controller": controller})
				g.Expect(ok).To(BeTrue(), "queue depth of %s", controller)
				expectPositive(g, m, "workqueue_queue_duration_seconds", map[string]string{"controller": controller})
				expectPositive(g, m, "fleet_api_requests_total", map[string]string{"controller": controller, "target": "hub"})
			}
		}).Should(Succeed())

		By("the syncer of member-1: " + members.Named("member-1").MetricsURL())
		Eventually(func(g Gomega) {
			m, err := localfleet.Scrape(members.Named("member-1").MetricsURL())
			g.Expect(err).NotTo(HaveOccurred())
			expectPositive(g, m, "fleet_work_apply_duration_seconds", map[string]string{"member": "member-1"})
			expectPositive(g, m, "fleet_manifests_applied_total", map[string]string{"member": "member-1", "result": "applied"})
			_, ok := m.Sum("fleet_work_apply_errors_total", nil)
			g.Expect(ok).To(BeTrue(), "Work apply errors are reported, even when there are none")
			expectPositive(g, m, "fleet_api_requests_total", map[string]string{"controller": "fleet-work-applier", "target": "member"})
			expectPositive(g, m, "fleet_api_requests_total", map[string]string{"controller": "fleet-work-applier", "target": "hub"})
		}).Should(Succeed())

		By("pprof next to the metrics, as the suite starts the hub with --profiling")
		resp, err := http.Get(strings.TrimSuffix(hub.MetricsURL(), "/metrics") + "/debug/pprof/heap?debug=1")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})
})

func expectPositive(g Gomega, m localfleet.Metrics, name string, labels map[string]string) {
	v, ok := m.Sum(name, labels)
	g.ExpectWithOffset(1, ok).To(BeTrue(), "%s%v is reported", name, labels)
	g.ExpectWithOffset(1, v).To(BeNumerically(">", 0), "%s%v", name, labels)
}
