package app

import (
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/utils/ptr"
)

// controllerWorkqueues gathers the workqueue metrics of the hub's
// controllers from the Kubernetes registry. The hub links kcp, whose
// component-base sets client-go's global workqueue metrics provider before
// controller-runtime can, so the controllers' queues report there (labelled
// name=<controller>) rather than in controller-runtime's registry. They are
// served as controller-runtime serves them: with a controller label too.
type controllerWorkqueues struct{}

func (controllerWorkqueues) Gather() ([]*dto.MetricFamily, error) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	var out []*dto.MetricFamily
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "workqueue_") {
			continue
		}
		var ours []*dto.Metric
		for _, m := range f.Metric {
			if name := labelValue(m, "name"); strings.HasPrefix(name, "fleet-") {
				m.Label = append(m.Label, &dto.LabelPair{Name: ptr.To("controller"), Value: ptr.To(name)})
				sort.Slice(m.Label, func(i, j int) bool { return m.Label[i].GetName() < m.Label[j].GetName() })
				ours = append(ours, m)
			}
		}
		if len(ours) > 0 {
			f.Metric = ours
			out = append(out, f)
		}
	}
	return out, err
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
