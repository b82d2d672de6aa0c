package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// cycle is one run of Schedule.
type cycle struct {
	ctx    context.Context
	fw     *Framework
	in     *Input
	policy *placementv1beta1.PlacementPolicy
	state  *CycleState

	// current and obsolete hold the active binding kept per cluster, on the
	// current and on an older policy snapshot; unscheduled holds an
	// Unscheduled binding of a cluster that has no active one.
	current, obsolete, unscheduled map[string]*Binding

	// Plugins that take part after PreFilter / PreScore; pick-time plugins
	// (see ReservePlugin) are kept apart.
	filters, pickFilters []FilterPlugin
	scorers, pickScorers []ScorePlugin
	reservers            []ReservePlugin
	// rejectAll is set when a PreFilter plugin rejected every cluster.
	rejectAll *Status

	res      Result
	selected map[string]bool
	rejected []placementv1beta1.ClusterDecision
}

func newCycle(ctx context.Context, fw *Framework, in *Input, policy *placementv1beta1.PlacementPolicy) *cycle {
	return &cycle{
		ctx: ctx, fw: fw, in: in, policy: policy,
		state: NewCycleState(CycleInfo{
			Placement: in.Placement, Namespace: in.Namespace, Now: in.Now, Granted: in.Granted,
		}),
		current:     map[string]*Binding{},
		obsolete:    map[string]*Binding{},
		unscheduled: map[string]*Binding{},
		selected:    map[string]bool{},
	}
}

// lookup finds the named clusters; indexing only those keeps it cheap in a
// large fleet. Names without a cluster map to nil.
func (c *cycle) lookup(names []string) map[string]*clusterv1beta1.MemberCluster {
	found := make(map[string]*clusterv1beta1.MemberCluster, len(names))
	for _, name := range names {
		found[name] = nil
	}
	for _, mc := range c.in.Clusters {
		if _, ok := found[mc.Name]; ok {
			found[mc.Name] = mc
		}
	}
	return found
}

// classifyBindings sorts the existing bindings into current, obsolete and
// unscheduled ones, and unschedules duplicates and bindings whose cluster is
// gone or may no longer keep them (Retain).
func (c *cycle) classifyBindings() error {
	bindings := make([]*Binding, len(c.in.Bindings))
	targets := make([]string, len(c.in.Bindings))
	for i := range c.in.Bindings {
		bindings[i] = &c.in.Bindings[i]
		targets[i] = c.in.Bindings[i].TargetCluster
	}
	clusters := c.lookup(targets)
	// The first active binding per cluster wins; see keepFirst.
	slices.SortFunc(bindings, c.keepFirst)
	var scheduledOrBound []*clusterv1beta1.MemberCluster
	var obsolete []string
	for _, b := range bindings {
		if b.State == placementv1beta1.BindingStateUnscheduled {
			if c.current[b.TargetCluster] == nil && c.obsolete[b.TargetCluster] == nil && c.unscheduled[b.TargetCluster] == nil {
				c.unscheduled[b.TargetCluster] = b
			}
			continue
		}
		if c.current[b.TargetCluster] != nil || c.obsolete[b.TargetCluster] != nil {
			c.unschedule(b) // a second active binding for the same cluster
			continue
		}
		mc := clusters[b.TargetCluster]
		keep, err := c.retain(mc)
		if err != nil {
			return err
		}
		switch {
		case !keep:
			c.unschedule(b)
		case b.SchedulingPolicySnapshotName == c.in.PolicySnapshotName:
			c.current[b.TargetCluster] = b
			scheduledOrBound = append(scheduledOrBound, mc)
		default:
			c.obsolete[b.TargetCluster] = b
			obsolete = append(obsolete, b.TargetCluster)
		}
	}
	c.state.setBindings(scheduledOrBound, obsolete)
	return nil
}

// keepFirst orders bindings so that the one to keep for a cluster comes
// first: active before unscheduled, current snapshot before older ones, Bound
// before Scheduled, then by name.
func (c *cycle) keepFirst(a, b *Binding) int {
	rank := func(x *Binding) int {
		r := 0
		if x.State == placementv1beta1.BindingStateUnscheduled {
			r += 4
		}
		if x.SchedulingPolicySnapshotName != c.in.PolicySnapshotName {
			r += 2
		}
		if x.State != placementv1beta1.BindingStateBound {
			r++
		}
		return r
	}
	if d := rank(a) - rank(b); d != 0 {
		return d
	}
	return strings.Compare(a.Name, b.Name)
}

// retain runs the Retain plugins for a cluster that holds a binding.
func (c *cycle) retain(mc *clusterv1beta1.MemberCluster) (bool, error) {
	if mc == nil {
		return false, nil
	}
	for _, p := range c.fw.profile.retain {
		st := p.Retain(c.ctx, c.state, mc)
		switch {
		case st.IsInternalError():
			return false, pluginError("Retain", p, st)
		case st.IsClusterUnschedulable():
			return false, nil
		}
	}
	return true, nil
}

// keepCurrent selects every cluster with a current binding, with the
// decision stored on the binding (scheduling is IgnoredDuringExecution).
func (c *cycle) keepCurrent() {
	for name, b := range c.current {
		c.selected[name] = true
		d := *b.ClusterDecision.DeepCopy()
		d.ClusterName, d.Selected = name, true
		if d.ClusterScore == nil {
			d.ClusterScore = newClusterScore(ClusterScore{})
		}
		if d.Reason == "" {
			d.Reason = PickedReason
		}
		c.res.Decisions = append(c.res.Decisions, d)
	}
}

// runPreFilter runs the PreFilter plugins and settles which Filter (and
// Reserve) plugins take part in the cycle.
func (c *cycle) runPreFilter() error {
	var skipped map[string]bool
	for _, p := range c.fw.profile.preFilter {
		st := p.PreFilter(c.ctx, c.state, c.policy)
		switch {
		case st.IsInternalError():
			return pluginError("PreFilter", p, st)
		case st.IsSkip():
			if skipped == nil {
				skipped = map[string]bool{}
			}
			skipped[p.Name()] = true
		case st.IsClusterUnschedulable() && c.rejectAll == nil:
			c.rejectAll = st
		}
	}
	for _, p := range c.fw.profile.filter {
		switch {
		case skipped[p.Name()]:
		case c.fw.pickTime[p.Name()]:
			c.pickFilters = append(c.pickFilters, p)
		default:
			c.filters = append(c.filters, p)
		}
	}
	for _, p := range c.fw.profile.reserve {
		if !skipped[p.Name()] {
			c.reservers = append(c.reservers, p)
		}
	}
	return nil
}

// filter runs the Filter plugins on a cluster; nil means it passed.
func (c *cycle) filter(plugins []FilterPlugin, mc *clusterv1beta1.MemberCluster) (*Status, error) {
	if c.rejectAll != nil {
		return c.rejectAll, nil
	}
	for _, p := range plugins {
		st := p.Filter(c.ctx, c.state, c.policy, mc)
		switch {
		case st.IsInternalError():
			return nil, pluginError("Filter", p, st)
		case st.IsClusterUnschedulable():
			return st, nil
		}
	}
	return nil, nil
}

// filterAll runs the static filters on every cluster and records the
// rejections; it returns the clusters that passed.
func (c *cycle) filterAll() ([]*clusterv1beta1.MemberCluster, error) {
	if err := c.runPreFilter(); err != nil {
		return nil, err
	}
	var feasible []*clusterv1beta1.MemberCluster
	for _, mc := range c.in.Clusters {
		st, err := c.filter(c.filters, mc)
		if err != nil {
			return nil, err
		}
		if st != nil {
			c.reject(mc.Name, st.Message(), nil)
			continue
		}
		feasible = append(feasible, mc)
	}
	return feasible, nil
}

// pick selects a cluster: an obsolete or unscheduled binding of the cluster is
// moved to this snapshot, otherwise a new binding is created.
func (c *cycle) pick(name string, score ClusterScore) {
	d := placementv1beta1.ClusterDecision{
		ClusterName: name, Selected: true, ClusterScore: newClusterScore(score), Reason: PickedReason,
	}
	c.selected[name] = true
	c.res.Decisions = append(c.res.Decisions, d)
	switch {
	case c.obsolete[name] != nil:
		c.res.Patch = append(c.res.Patch, BindingUpdate{Name: c.obsolete[name].Name, Decision: d})
	case c.unscheduled[name] != nil:
		c.res.Patch = append(c.res.Patch, BindingUpdate{Name: c.unscheduled[name].Name, Decision: d, Reschedule: true})
	default:
		c.res.Create = append(c.res.Create, d)
	}
}

// reject records a cluster that was not selected. Clusters that keep their
// binding are filtered (same placement affinity) but already have a decision.
func (c *cycle) reject(name, reason string, score *placementv1beta1.ClusterScore) {
	if c.selected[name] {
		return
	}
	c.rejected = append(c.rejected, placementv1beta1.ClusterDecision{ClusterName: name, Reason: reason, ClusterScore: score})
}

func (c *cycle) unschedule(b *Binding) { c.res.Unschedule = append(c.res.Unschedule, b.Name) }

// unscheduleUnpickedObsolete unschedules obsolete bindings whose cluster was
// not picked again under the current policy.
func (c *cycle) unscheduleUnpickedObsolete() {
	for name, b := range c.obsolete {
		if !c.selected[name] {
			c.unschedule(b)
		}
	}
}

// conclude sets the Scheduled condition of the policy snapshot.
func (c *cycle) conclude(fulfilled bool) {
	found := len(c.selected)
	c.res.Fulfilled = fulfilled
	if fulfilled {
		c.res.Reason = placementv1beta1.SchedulingPolicyFulfilledReason
		c.res.Message = fmt.Sprintf(fulfilledMessageFormat, found)
		return
	}
	c.res.Reason = placementv1beta1.SchedulingPolicyUnfulfilledReason
	c.res.Message = fmt.Sprintf(notFulfilledMessageFormat, found)
}

// result sorts everything so that the same input gives the same output.
func (c *cycle) result() Result {
	byCluster := func(a, b placementv1beta1.ClusterDecision) int { return strings.Compare(a.ClusterName, b.ClusterName) }
	slices.SortFunc(c.res.Create, byCluster)
	slices.SortFunc(c.res.Patch, func(a, b BindingUpdate) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(c.res.Unschedule)
	slices.SortFunc(c.res.Decisions, byCluster)
	slices.SortFunc(c.rejected, byCluster)
	c.res.Decisions = append(c.res.Decisions, c.rejected[:min(len(c.rejected), maxUnselectedDecisions)]...)
	if len(c.res.Decisions) > maxClusterDecisions {
		c.res.Decisions = c.res.Decisions[:maxClusterDecisions]
	}
	return c.res
}

func newClusterScore(s ClusterScore) *placementv1beta1.ClusterScore {
	affinity, topology := s.AffinityScore, s.TopologySpreadScore
	return &placementv1beta1.ClusterScore{AffinityScore: &affinity, TopologySpreadScore: &topology}
}

func pluginError(stage string, p Plugin, st *Status) error {
	if err := st.Err(); err != nil {
		return fmt.Errorf("%s plugin %s: %w", stage, p.Name(), err)
	}
	return fmt.Errorf("%s plugin %s: %s", stage, p.Name(), st.Message())
}
