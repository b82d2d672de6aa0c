package updaterun

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// member is a scheduled cluster with the labels stages select it by.
type member struct {
	name   string
	labels map[string]string
}

// planStages puts every scheduled cluster in the one stage that selects it,
// in update order: by the integer value of the stage's sorting label, then
// by name. A cluster selected by two stages, or by none, is an error that
// names it: the strategy must be fixed before anything is rolled out.
func planStages(run string, stages []placementv1beta1.StageConfig, clusters []member) ([]placementv1beta1.StageUpdatingStatus, error) {
	selectors := make([]labels.Selector, len(stages))
	for i, s := range stages {
		if s.LabelSelector == nil {
			selectors[i] = labels.Nothing()
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("stage %q has an invalid labelSelector: %w", s.Name, err)
		}
		selectors[i] = sel
	}
	members := make([][]member, len(stages))
	var unassigned []string
	for _, c := range clusters {
		in := -1
		for i, sel := range selectors {
			if !sel.Matches(labels.Set(c.labels)) {
				continue
			}
			if in >= 0 {
				return nil, fmt.Errorf("cluster %q is selected by both stage %q and stage %q; a cluster must belong to exactly one stage, make the stages' labelSelectors disjoint",
					c.name, stages[in].Name, stages[i].Name)
			}
			in = i
		}
		if in < 0 {
			unassigned = append(unassigned, c.name)
			continue
		}
		members[in] = append(members[in], c)
	}
	if len(unassigned) > 0 {
		sort.Strings(unassigned)
		return nil, fmt.Errorf("scheduled cluster(s) %s are selected by no stage; every scheduled cluster must belong to a stage, widen a stage's labelSelector or add a stage",
			strings.Join(unassigned, ", "))
	}
	out := make([]placementv1beta1.StageUpdatingStatus, len(stages))
	for i, s := range stages {
		if err := sortMembers(s, members[i]); err != nil {
			return nil, err
		}
		out[i] = placementv1beta1.StageUpdatingStatus{StageName: s.Name}
		for _, m := range members[i] {
			out[i].Clusters = append(out[i].Clusters, placementv1beta1.ClusterUpdatingStatus{ClusterName: m.name})
		}
		for _, t := range s.BeforeStageTasks {
			out[i].BeforeStageTaskStatus = append(out[i].BeforeStageTaskStatus, placementv1beta1.StageTaskStatus{
				Type: t.Type, ApprovalRequestName: placementv1beta1.ApprovalRequestName(run, placementv1beta1.BeforeStageTaskLabelValue, s.Name)})
		}
		for _, t := range s.AfterStageTasks {
			ts := placementv1beta1.StageTaskStatus{Type: t.Type}
			if t.Type == placementv1beta1.StageTaskTypeApproval {
				ts.ApprovalRequestName = placementv1beta1.ApprovalRequestName(run, placementv1beta1.AfterStageTaskLabelValue, s.Name)
			}
			out[i].AfterStageTaskStatus = append(out[i].AfterStageTaskStatus, ts)
		}
	}
	return out, nil
}

// sortMembers orders a stage's clusters by the integer value of its sorting
// label, then by name.
func sortMembers(s placementv1beta1.StageConfig, ms []member) error {
	if s.SortingLabelKey == nil {
		sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
		return nil
	}
	key := *s.SortingLabelKey
	order := make(map[string]int, len(ms))
	for _, m := range ms {
		v, ok := m.labels[key]
		if !ok {
			return fmt.Errorf("cluster %q of stage %q has no label %q, which the stage sorts its clusters by; label the cluster or remove sortingLabelKey", m.name, s.Name, key)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("cluster %q of stage %q has label %s=%q, which is not an integer; the stage sorts its clusters by this label's integer value", m.name, s.Name, key, v)
		}
		order[m.name] = n
	}
	sort.Slice(ms, func(i, j int) bool {
		if order[ms[i].name] != order[ms[j].name] {
			return order[ms[i].name] < order[ms[j].name]
		}
		return ms[i].name < ms[j].name
	})
	return nil
}
