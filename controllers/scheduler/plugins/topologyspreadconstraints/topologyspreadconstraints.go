// Package topologyspreadconstraints spreads PickN placements across the
// topology domains (values of a cluster label) named by the policy.
//
// For each constraint the domains are the label values of the clusters that
// passed the other filters plus those of clusters that keep a binding; a
// cluster without the label is no domain. As in Kubernetes, picking a cluster
// in domain d is allowed by a DoNotSchedule constraint iff
// count(d) + 1 - min(count) <= maxSkew, where count is the number of active
// bindings on the current policy snapshot plus the clusters picked so far.
// Clusters without the label are filtered by DoNotSchedule constraints and
// rank last under ScheduleAnyway ones. Every constraint scores
// -(count(d) - min(count)), so picks go to the least used domains first.
//
// The verdicts depend on the picks made so far, so the plugin is a pick-time
// plugin: PostBatch asks for one cluster at a time and Reserve counts each
// pick before the next one is evaluated.
package topologyspreadconstraints

import (
	"context"
	"fmt"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "TopologySpreadConstraints"

const stateKey framework.StateKey = Name

// Plugin implements topology spread constraints.
type Plugin struct{}

var (
	_ framework.PostBatchPlugin = Plugin{}
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
	_ framework.PreScorePlugin  = Plugin{}
	_ framework.ScorePlugin     = Plugin{}
	_ framework.ReservePlugin   = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// constraint is a constraint with its defaults applied and its domain counts.
type constraint struct {
	key           string
	maxSkew       int32
	doNotSchedule bool
	domains       map[string]*domain
	min, max      int32
	// Statuses are built once per cycle and shared by all clusters.
	violated, noKey *framework.Status
}

type domain struct{ count int32 }

type spreadState struct {
	constraints []constraint
	// domainsOf maps a cluster to its domain per constraint (nil: no label).
	domainsOf map[*clusterv1beta1.MemberCluster][]*domain
	// last caches the latest lookup: the framework scores a cluster right
	// after filtering it, and this is the hot path of the pick loop.
	last        *clusterv1beta1.MemberCluster
	lastDomains []*domain
}

func applies(policy *placementv1beta1.PlacementPolicy) bool {
	return policy.PlacementType == placementv1beta1.PickNPlacementType && len(policy.TopologySpreadConstraints) > 0
}

// PostBatch picks one cluster at a time, so that each pick sees the previous.
func (Plugin) PostBatch(_ context.Context, _ *framework.CycleState, policy *placementv1beta1.PlacementPolicy) (int, *framework.Status) {
	if !applies(policy) {
		return 0, framework.NewStatus(framework.Skip)
	}
	return 1, nil
}

// PreFilter reads the constraints; only PickN placements with constraints use the plugin.
func (Plugin) PreFilter(_ context.Context, state *framework.CycleState, policy *placementv1beta1.PlacementPolicy) *framework.Status {
	if !applies(policy) {
		return framework.NewStatus(framework.Skip)
	}
	st := &spreadState{constraints: make([]constraint, len(policy.TopologySpreadConstraints))}
	for i, tsc := range policy.TopologySpreadConstraints {
		c := constraint{key: tsc.TopologyKey, maxSkew: 1, doNotSchedule: tsc.WhenUnsatisfiable != placementv1beta1.ScheduleAnyway, domains: map[string]*domain{}}
		if tsc.MaxSkew != nil && *tsc.MaxSkew > 0 {
			c.maxSkew = *tsc.MaxSkew
		}
		c.violated = framework.Unschedulable(fmt.Sprintf("violated doNotSchedule topology spread constraint %q (max skew %d)", c.key, c.maxSkew))
		c.noKey = framework.Unschedulable(fmt.Sprintf("cluster does not have the topology key %q of a doNotSchedule topology spread constraint", c.key))
		st.constraints[i] = c
	}
	state.Write(stateKey, st)
	return nil
}

// PreScore registers the domains and counts the existing bindings.
func (Plugin) PreScore(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, feasible []*clusterv1beta1.MemberCluster) *framework.Status {
	st, ok := readState(state)
	if !ok {
		return framework.NewStatus(framework.Skip)
	}
	bound := state.ScheduledOrBoundClusters()
	n := len(feasible) + len(bound)
	st.domainsOf = make(map[*clusterv1beta1.MemberCluster][]*domain, n)
	// One backing array for all clusters' domain lists.
	backing := make([]*domain, n*len(st.constraints))
	for _, mc := range feasible {
		backing = st.register(mc, backing)
	}
	for _, mc := range bound {
		backing = st.register(mc, backing)
		for _, d := range st.domainsOf[mc] {
			if d != nil {
				d.count++
			}
		}
	}
	st.updateBounds()
	return nil
}

// register records the cluster's domains in the head of backing, creating
// domains as needed, and returns the rest of backing.
func (st *spreadState) register(mc *clusterv1beta1.MemberCluster, backing []*domain) []*domain {
	ds := backing[:len(st.constraints):len(st.constraints)]
	for i := range st.constraints {
		c := &st.constraints[i]
		v, ok := mc.Labels[c.key]
		if !ok {
			continue
		}
		if c.domains[v] == nil {
			c.domains[v] = &domain{}
		}
		ds[i] = c.domains[v]
	}
	st.domainsOf[mc] = ds
	return backing[len(st.constraints):]
}

func (st *spreadState) updateBounds() {
	for i := range st.constraints {
		c := &st.constraints[i]
		first := true
		for _, d := range c.domains {
			if first || d.count < c.min {
				c.min = d.count
			}
			if first || d.count > c.max {
				c.max = d.count
			}
			first = false
		}
	}
}

func readState(state *framework.CycleState) (*spreadState, bool) {
	v, ok := state.Read(stateKey)
	if !ok {
		return nil, false
	}
	return v.(*spreadState), true
}

// clusterDomains reads the cycle's spread state and a cluster's domains for
// an extension point that needs PreScore to have run.
func clusterDomains(state *framework.CycleState, mc *clusterv1beta1.MemberCluster, point string) (*spreadState, []*domain, *framework.Status) {
	st, ok := readState(state)
	if !ok || st.domainsOf == nil {
		return nil, nil, framework.FromError(fmt.Errorf("%s: %s ran before PreScore", Name, point))
	}
	ds, status := st.domainsFor(mc)
	return st, ds, status
}

func (st *spreadState) domainsFor(mc *clusterv1beta1.MemberCluster) ([]*domain, *framework.Status) {
	if mc == st.last {
		return st.lastDomains, nil
	}
	ds, ok := st.domainsOf[mc]
	if !ok {
		return nil, framework.FromError(fmt.Errorf("%s: cluster %s was not seen in PreScore", Name, mc.Name))
	}
	st.last, st.lastDomains = mc, ds
	return ds, nil
}

// Filter rejects a cluster if picking it now breaks a DoNotSchedule constraint.
func (Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	st, ds, status := clusterDomains(state, cluster, "Filter")
	if status != nil {
		return status
	}
	for i := range st.constraints {
		c := &st.constraints[i]
		switch {
		case !c.doNotSchedule:
		case ds[i] == nil:
			return c.noKey
		case ds[i].count+1-c.min > c.maxSkew:
			return c.violated
		}
	}
	return nil
}

// Score favours clusters in the least used domains.
func (Plugin) Score(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) (framework.ClusterScore, *framework.Status) {
	st, ds, status := clusterDomains(state, cluster, "Score")
	if status != nil {
		return framework.ClusterScore{}, status
	}
	var score int32
	for i := range st.constraints {
		c := &st.constraints[i]
		if ds[i] == nil {
			score -= c.max - c.min + 1
			continue
		}
		score -= ds[i].count - c.min
	}
	return framework.ClusterScore{TopologySpreadScore: score}, nil
}

// Reserve counts a picked cluster in its domains.
func (Plugin) Reserve(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	st, ds, status := clusterDomains(state, cluster, "Reserve")
	if status != nil {
		return status
	}
	for _, d := range ds {
		if d != nil {
			d.count++
		}
	}
	st.updateBounds()
	return nil
}
