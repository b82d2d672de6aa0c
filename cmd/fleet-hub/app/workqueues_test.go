package app

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
)

func TestControllerWorkqueues(t *testing.T) {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "fleet-test"})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	other := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "kcp-something"})
	defer other.ShutDown()
	other.Add("a")

	families, err := controllerWorkqueues{}.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		for _, m := range f.Metric {
			if labelValue(m, "name") != "fleet-test" {
				t.Errorf("%s of queue %q served; only the hub's controllers' queues are", f.GetName(), labelValue(m, "name"))
			}
			if f.GetName() == "workqueue_depth" {
				found = true
				if labelValue(m, "controller") != "fleet-test" || m.Gauge.GetValue() != 2 {
					t.Errorf("workqueue_depth %v = %v, want controller=fleet-test and 2", m.Label, m.Gauge.GetValue())
				}
			}
		}
	}
	if !found {
		t.Fatal("no workqueue_depth for queue fleet-test")
	}
}
